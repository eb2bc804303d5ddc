//! Embeds the built widgets (`widgets/dist`, committed, at the top of the
//! repository) in `$OUT_DIR/widgets.rs`, read by `src/widget.rs`.

fn main() {
    // Read as the script runs, not baked in when it is compiled: a build
    // script shared by two checkouts (one target dir) embeds its own's.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    embed::embed(&std::path::Path::new(&root).join("../../widgets/dist"), "widgets.rs");
}
