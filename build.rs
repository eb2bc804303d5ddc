//! Embeds the operator console's built files (`widgets/dist/console`,
//! committed) so that `cargo build` needs no JavaScript toolchain: each file
//! becomes `(name, bytes)` in `$OUT_DIR/console.rs`, read by
//! `src/console.rs`. (The Index widgets are the `index-network` crate's.)

use std::fmt::Write;
use std::path::Path;

fn main() {
    // Read as the script runs, not baked in when it is compiled: a build
    // script shared by two checkouts (one target dir) embeds its own's.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    embed(&Path::new(&root).join("widgets/dist/console"), "console.rs");
}

/// Writes `$OUT_DIR/<out>`: `FILES`, every file directly in `dist`.
fn embed(dist: &Path, out: &str) {
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files: Vec<_> = std::fs::read_dir(dist)
        .unwrap_or_else(|_| panic!("{} exists (build it with: node widgets/build.mjs)", dist.display()))
        .map(|e| e.expect("readable widgets/dist").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut code = format!(
        "/// Every file of `{}`: `(name, contents)`.\npub(crate) const FILES: &[(&str, &[u8])] = &[\n",
        dist.display()
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
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join(out);
    std::fs::write(out, code).unwrap();
}
