//! `mcp-gateway archive index`: walks the folders and brings SQLite and the
//! full-text index up to date. A file whose size and mtime are unchanged is
//! not read; one whose content hash is unchanged is not re-indexed; files
//! gone from disk are removed. An unreadable or undecodable file is reported
//! and keeps its previous state. Both stores change in one step at the end
//! (the tantivy commit, then the SQLite transaction's), so a reader sees the
//! old archive or the new one; a run that finds nothing changed writes
//! nothing.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

use rusqlite::params;
use sha2::{Digest, Sha256};
use tantivy::directory::MmapDirectory;
use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use super::links::Resolver;
use super::parse::{self, Kind};
use super::{ArchivesConfig, Error, Fields, db};

/// Memory for the index writer (one thread: the machine may be serving).
const WRITER_HEAP: usize = 64 * 1024 * 1024;

/// Where indexing is, for a progress display.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Files looked at.
    pub done: usize,
    /// Files in all.
    pub total: usize,
    /// The current file.
    pub path: &'a str,
}

/// What one run did.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Files with a supported extension.
    pub scanned: usize,
    /// New documents.
    pub added: usize,
    /// Changed documents.
    pub updated: usize,
    /// Documents left as they were.
    pub unchanged: usize,
    /// Documents whose file is gone.
    pub removed: usize,
    /// Files of other types, not read.
    pub ignored: usize,
    /// Files that could not be read: (path, why).
    pub skipped: Vec<(String, String)>,
    /// Bytes read and indexed.
    pub bytes: u64,
    /// Citations after resolution, and how many point at archived documents.
    pub citations: usize,
    /// …of which resolve to a document.
    pub resolved: usize,
    /// Wall time.
    pub elapsed: Duration,
}

/// A stable id from the document's archive path.
fn doc_id(path: &str) -> String {
    let digest = Sha256::digest(path.as_bytes());
    format!("doc-{}", &vocab::text::hex(&digest)[..12])
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Opens the full-text index, creating it if need be.
fn open_index(dir: &Path) -> Result<Index, Error> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let directory = MmapDirectory::open(dir).map_err(|e| Error::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    Ok(Index::open_or_create(directory, Fields::schema())?)
}

/// Longest wait for another indexer to finish.
const WRITER_WAIT: Duration = Duration::from_secs(60);

/// Brings the archive's stores up to date with its folders.
pub fn index(config: &ArchivesConfig, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Report, Error> {
    let started = Instant::now();
    if let Some(parent) = config.db_path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let index = open_index(&config.index_dir)?;
    let fields = Fields::of(&index.schema())?;
    // One writer at a time: `archive index` and a serving gateway that
    // follows the folders wait for each other's run (incremental, so short).
    let waited = Instant::now();
    let mut writer: IndexWriter = loop {
        match index.writer_with_num_threads(1, WRITER_HEAP) {
            Ok(w) => break w,
            Err(tantivy::TantivyError::LockFailure(..)) if waited.elapsed() < WRITER_WAIT => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(tantivy::TantivyError::LockFailure(..)) => {
                return Err(Error::Busy(config.index_dir.display().to_string()));
            }
            Err(e) => return Err(e.into()),
        }
    };
    let mut conn = db::open(&config.db_path, true)?;
    let known = db::known(&conn)?;

    let mut files = Vec::new();
    let mut report = Report::default();
    for folder in &config.folders {
        if !folder.path.is_dir() {
            return Err(Error::Io {
                path: folder.path.display().to_string(),
                message: "archive folder not found".into(),
            });
        }
        for entry in walkdir::WalkDir::new(&folder.path).sort_by_file_name() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    let path = e
                        .path()
                        .map_or_else(|| folder.name.clone(), |p| p.display().to_string());
                    report.skipped.push((path, e.to_string()));
                    continue;
                }
            };
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = entry.path().strip_prefix(&folder.path).unwrap_or(entry.path());
            let rel = rel.to_string_lossy().replace('\\', "/");
            let Some(kind) = Kind::of(&rel) else {
                report.ignored += 1;
                continue;
            };
            files.push((format!("{}/{rel}", folder.name), entry.into_path(), kind));
        }
    }

    let tx = conn.transaction()?;
    // Whether a row changed without its document: a file rewritten as it was.
    let mut restamped = false;
    let mut seen = HashSet::new();
    let total = files.len();
    for (done, (path, file, kind)) in files.iter().enumerate() {
        progress(Progress { done, total, path });
        report.scanned += 1;
        seen.insert(path.clone());
        let meta = match std::fs::metadata(file) {
            Ok(m) => m,
            Err(e) => {
                report.skipped.push((path.clone(), e.to_string()));
                continue;
            }
        };
        let size = meta.len();
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        let previous = known.get(path);
        if previous.is_some_and(|k| k.size == size && k.mtime_ns == mtime_ns) {
            report.unchanged += 1;
            continue;
        }
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                report.skipped.push((path.clone(), e.to_string()));
                continue;
            }
        };
        let hash = vocab::text::hex(&Sha256::digest(&bytes));
        let id = doc_id(path);
        if let Some(k) = previous.filter(|k| k.hash == hash) {
            tx.execute(
                "UPDATE documents SET size = ?1, mtime_ns = ?2 WHERE id = ?3",
                params![size as i64, mtime_ns, k.id],
            )?;
            restamped = true;
            report.unchanged += 1;
            continue;
        }
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or(path);
        let parsed = match parse::parse(&bytes, *kind, stem) {
            Ok(p) => p,
            Err(e) => {
                report.skipped.push((path.clone(), e.to_string()));
                continue;
            }
        };
        report.bytes += size;
        writer.delete_term(Term::from_field_text(fields.id, &id));
        let mut doc = TantivyDocument::default();
        doc.add_text(fields.id, &id);
        doc.add_text(fields.path, path);
        doc.add_text(fields.title, &parsed.title);
        doc.add_text(fields.content, &parsed.text);
        if let Some(source) = &parsed.source_url {
            doc.add_text(fields.source, source);
        }
        if let Some(date) = &parsed.date {
            doc.add_text(fields.date, date);
        }
        writer.add_document(doc)?;
        tx.execute(
            "INSERT INTO documents (id, path, title, source_url, date, size, mtime_ns, hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(id) DO UPDATE SET title = excluded.title, source_url = excluded.source_url,
               date = excluded.date, size = excluded.size, mtime_ns = excluded.mtime_ns, hash = excluded.hash",
            params![
                id,
                path,
                parsed.title,
                parsed.source_url,
                parsed.date,
                size as i64,
                mtime_ns,
                hash
            ],
        )?;
        tx.execute("DELETE FROM links WHERE source_id = ?1", params![id])?;
        for link in &parsed.links {
            tx.execute(
                "INSERT INTO links (source_id, url, context) VALUES (?1, ?2, ?3)",
                params![id, link.url, link.context],
            )?;
        }
        if previous.is_some() {
            report.updated += 1;
        } else {
            report.added += 1;
        }
    }
    progress(Progress {
        done: total,
        total,
        path: "",
    });

    for (path, k) in &known {
        if !seen.contains(path) {
            writer.delete_term(Term::from_field_text(fields.id, &k.id));
            tx.execute("DELETE FROM documents WHERE id = ?1", params![k.id])?;
            report.removed += 1;
        }
    }

    if restamped || report.added + report.updated + report.removed > 0 {
        (report.citations, report.resolved) = resolve_citations(&tx)?;
        writer.commit()?;
        tx.commit()?;
        writer.wait_merging_threads()?;
    } else {
        // A commit would rewrite both stores all the same (and wake whoever watches them).
        (report.citations, report.resolved) =
            tx.query_row("SELECT count(*), count(target_id) FROM citations", [], |r| {
                Ok((r.get::<_, i64>(0)? as usize, r.get::<_, i64>(1)? as usize))
            })?;
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

/// Rebuilds every citation from the stored links: a new document may be
/// the target of a link written long before it was archived.
fn resolve_citations(tx: &rusqlite::Transaction<'_>) -> Result<(usize, usize), rusqlite::Error> {
    let mut resolver = Resolver::default();
    let mut paths = HashMap::new();
    {
        let mut stmt = tx.prepare("SELECT id, path, source_url FROM documents")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let (id, path, url): (String, String, Option<String>) = (r.get(0)?, r.get(1)?, r.get(2)?);
            resolver.add(&id, &path, url.as_deref());
            paths.insert(id, path);
        }
    }
    tx.execute("DELETE FROM citations", [])?;
    let mut stmt = tx.prepare("SELECT source_id, url, context FROM links ORDER BY rowid")?;
    let mut insert = tx.prepare(
        "INSERT INTO citations (source_id, target_id, target_url, context, confidence) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut rows = stmt.query([])?;
    let (mut all, mut resolved) = (0, 0);
    while let Some(r) = rows.next()? {
        let (source, url, context): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let from = paths.get(&source).map_or("", String::as_str);
        let target = resolver.resolve(from, &url).filter(|(id, _)| *id != source);
        let confidence = target.as_ref().map_or(1.0, |(_, c)| *c);
        if target.is_some() {
            resolved += 1;
        }
        all += 1;
        insert.execute(params![source, target.map(|(id, _)| id), url, context, confidence])?;
    }
    Ok((all, resolved))
}
