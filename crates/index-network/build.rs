//! Embeds the built widgets (`widgets/dist`, committed, at the top of the
//! repository) so that `cargo build` needs no JavaScript toolchain: each
//! file becomes `(name, bytes)` in `$OUT_DIR/widgets.rs`, read by
//! `src/widget.rs`.

use std::fmt::Write;
use std::path::Path;

fn main() {
    // Read as the script runs, not baked in when it is compiled: a build
    // script shared by two checkouts (one target dir) embeds its own's.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dist = Path::new(&root).join("../../widgets/dist");
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files: Vec<_> = std::fs::read_dir(&dist)
        .unwrap_or_else(|_| panic!("{} exists (build it with: node widgets/build.mjs)", dist.display()))
        .map(|e| e.expect("readable widgets/dist").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut code = String::from(
        "/// Every file of `widgets/dist`: `(name, contents)`.\npub(crate) const FILES: &[(&str, &[u8])] = &[\n",
    );
    for path in files {
        let name = path.file_name().unwrap().to_str().expect("UTF-8 file names");
        writeln!(
            code,
            "    ({name:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("widgets.rs");
    std::fs::write(out, code).unwrap();
}
