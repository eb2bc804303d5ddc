//! Tests of `store`.

use super::*;
use crate::access::Grants;

each_engine!(tokens_authenticate_until_revoked_and_are_stored_hashed);
fn tokens_authenticate_until_revoked_and_are_stored_hashed((dir, s): crate::TestStore) {
    s.create_project("alpha", Some(Search::Bm25)).unwrap();
    let (info, secret) = s.issue_token("alpha", "ci").unwrap();
    assert!(secret.starts_with("mgw_"));
    let (id, project) = s.authenticate(&secret).unwrap().expect("valid token");
    assert_eq!((id, project.name.as_str()), (info.id, "alpha"));

    let mistyped = format!("{}x", &secret[..secret.len() - 1]);
    for bad in [mistyped.as_str(), "mgw_999_abc", "garbage", ""] {
        assert!(s.authenticate(bad).unwrap().is_none(), "{bad}");
    }
    assert!(s.revoke_token(info.id).unwrap());
    assert!(s.authenticate(&secret).unwrap().is_none());
    assert!(!s.revoke_token(info.id).unwrap(), "revoking twice is a no-op");

    let secret_part = secret.rsplit('_').next().unwrap();
    let stored: Vec<Vec<u8>> = s
        .with(|c| c.all("SELECT secret_hash FROM tokens", &[], |r| r.get(0)))
        .unwrap();
    assert_eq!(stored, [sha256(secret_part).to_vec()], "only the hash is kept");
    s.close();
    if let Ok(bytes) = std::fs::read(dir.path().join("gw.db")) {
        assert!(
            !bytes.windows(secret_part.len()).any(|w| w == secret_part.as_bytes()),
            "the secret is not in the file"
        );
    }
}

each_engine!(grants_whole_servers_and_tool_overrides);
fn grants_whole_servers_and_tool_overrides((_dir, s): crate::TestStore) {
    let p = s.create_project("p", Some(Search::Bm25)).unwrap();
    s.set_permission("p", "fs", None, true).unwrap();
    s.set_permission("p", "fs", Some("delete_file"), false).unwrap();
    s.set_permission("p", "gh", Some("list_issues"), true).unwrap();
    let g = Grants::from_permissions(s.permissions(p.id).unwrap());
    assert!(g.allows("fs", "read_file"));
    assert!(!g.allows("fs", "delete_file"));
    assert!(g.allows("gh", "list_issues"));
    assert!(!g.allows("gh", "create_issue"));
    assert!(!g.allows("db", "query"));
    assert!(g.sees_server("gh") && !g.sees_server("db"));
    // A tool's grant is not the server's: its resources and prompts stay shut.
    assert!(g.opens_server("fs") && !g.opens_server("gh") && !g.opens_server("db"));
    s.deny_server("p", "fs").unwrap();
    let g = Grants::from_permissions(s.permissions(p.id).unwrap());
    assert!(!g.allows("fs", "read_file"));
    assert!(!g.allows("fs", "delete_file"), "overrides of a denied server are gone");
    s.grant_if_undecided("p", "fs").unwrap();
    assert!(!Grants::from_permissions(s.permissions(p.id).unwrap()).allows("fs", "read_file"));
}

each_engine!(projects_are_unique_and_found_by_name_or_id);
fn projects_are_unique_and_found_by_name_or_id((_dir, s): crate::TestStore) {
    let p = s.create_project("alpha", None).unwrap();
    assert!(matches!(s.create_project("alpha", None), Err(Error::ProjectExists(_))));
    assert_eq!(s.project(&p.id.to_string()).unwrap().unwrap().name, "alpha");
    assert_eq!(
        s.set_search("alpha", Some(Search::Cloud)).unwrap().search,
        Some(Search::Cloud)
    );
    assert!(matches!(s.issue_token("nope", ""), Err(Error::NoProject(_))));
}

#[test]
fn corrupt_files_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.db");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let err = Store::open(&path).unwrap_err().to_string();
    assert!(err.contains("bad.db") && err.contains("not a SQLite database"), "{err}");
}

#[test]
fn a_locked_file_is_refused_clearly() {
    let (dir, s) = sqlite_test_store();
    let path = dir.path().join("gw.db");
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = Store::open(&path).unwrap_err().to_string();
    assert!(
        err.contains("gw.db") && err.contains("locked by another process"),
        "{err}"
    );
    holder.execute_batch("COMMIT").unwrap();
    drop(s);
}
