//! Embeds the operator console's built files (`widgets/dist/console` at the
//! top of the repository, committed) in `$OUT_DIR/console.rs`, read by
//! `src/lib.rs`. (The Index widgets are the `index-network` crate's.)

fn main() {
    // Read as the script runs, not baked in when it is compiled: a build
    // script shared by two checkouts (one target dir) embeds its own's.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    embed::embed(
        &std::path::Path::new(&root).join("../../widgets/dist/console"),
        "console.rs",
    );
}
