//! For build scripts: embeds every file directly in a folder (the built
//! widgets and console, committed) so that `cargo build` needs no
//! JavaScript toolchain. A crate of its own so that the two build scripts
//! that do it (the gateway's for the console, `index-network`'s for the
//! widgets) share it; it knows nothing else.

use std::fmt::Write;
use std::path::Path;

/// Writes `$OUT_DIR/<out>`: `FILES`, each file directly in `dist` as
/// `(name, contents)`, for the crate to `include!`; asks cargo to run the
/// script again when `dist` changes.
///
/// # Panics
/// When `dist` cannot be read (it says how to build it), or `OUT_DIR` is
/// not set: a build script has nothing better to do than stop.
pub fn embed(dist: &Path, out: &str) {
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
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join(out);
    std::fs::write(out, code).unwrap();
}
