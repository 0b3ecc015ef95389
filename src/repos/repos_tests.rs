use std::path::Path;

use super::*;
use crate::testing::id;

fn dotgit(top: &Path) -> std::path::PathBuf {
    let g = top.join(".git");
    for d in ["objects/info", "objects/pack", "refs", "info"] {
        std::fs::create_dir_all(g.join(d)).unwrap();
    }
    g
}

#[test]
fn a_plain_repo_layout_passes_and_each_redirect_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("p");
    let g = dotgit(&top);
    assert_eq!(layout::check(&top), Ok(()));
    for redirect in [
        "objects/info/alternates",
        "objects/info/http-alternates",
        "commondir",
    ] {
        std::fs::write(g.join(redirect), "/root/secret/objects\n").unwrap();
        let err = layout::check(&top).unwrap_err();
        assert!(err.contains(redirect), "{err}");
        std::fs::remove_file(g.join(redirect)).unwrap();
    }
    // A dangling symlink counts as there.
    std::os::unix::fs::symlink("/nonexistent", g.join("objects/info/alternates")).unwrap();
    assert!(layout::check(&top).is_err());
}

#[test]
fn a_dotgit_file_or_symlink_and_git_dirs_swapped_for_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("p");
    std::fs::create_dir_all(&top).unwrap();
    assert!(layout::check(&top).unwrap_err().contains("no .git"));
    std::fs::write(top.join(".git"), "gitdir: /root/secret\n").unwrap();
    assert!(layout::check(&top).unwrap_err().contains("is a file"));
    std::fs::remove_file(top.join(".git")).unwrap();
    std::os::unix::fs::symlink("/root/secret/.git", top.join(".git")).unwrap();
    assert!(layout::check(&top).unwrap_err().contains("symlink"));
    std::fs::remove_file(top.join(".git")).unwrap();
    let g = dotgit(&top);
    std::fs::remove_dir_all(g.join("objects")).unwrap();
    std::os::unix::fs::symlink("/root/secret/.git/objects", g.join("objects")).unwrap();
    assert!(
        layout::check(&top)
            .unwrap_err()
            .contains(".git/objects is a symlink")
    );
    let link = dir.path().join("l");
    std::os::unix::fs::symlink(&top, &link).unwrap();
    assert!(
        layout::check(&link)
            .unwrap_err()
            .contains("not a directory")
    );
}

#[test]
fn repo_paths_are_built_from_the_name_and_only_plain_paths_reach_git() {
    let repos = Repos::new(Path::new("/var/lib/hyperhive"), Sandbox::Off);
    assert_eq!(
        repos.proposed(&id("kid")),
        Path::new("/var/lib/hyperhive/proposed/kid")
    );
    assert_eq!(
        repos.applied(&id("kid")),
        Path::new("/var/lib/hyperhive/applied/kid.git")
    );
    assert!(git::plain_path(Path::new("/var/lib/x_y-1.2")).is_some());
    for bad in ["relative", "/a b", "/a'b", "/a/../b", "/a;b", "/a$(x)"] {
        assert!(git::plain_path(Path::new(bad)).is_none(), "{bad}");
    }
}

#[test]
fn the_sandboxed_upload_side_is_a_transient_unit_with_only_the_repo_bound() {
    let repos = Repos::new(
        Path::new("/var/lib/hyperhive"),
        Sandbox::TransientUnit {
            systemd_run: "/usr/bin/systemd-run".into(),
        },
    );
    let argv = repos.upload_side(&id("kid"), &["upload-pack"]).unwrap();
    let line = argv.join(" ");
    for part in [
        "/usr/bin/systemd-run --quiet --pipe --wait --collect",
        "-p DynamicUser=yes",
        "-p PrivateNetwork=yes",
        "-p TemporaryFileSystem=/var/lib/hyperhive:ro",
        "-p BindReadOnlyPaths=/var/lib/hyperhive/proposed/kid ",
        "--setenv=GIT_CONFIG_NOSYSTEM=1",
        "-c core.hooksPath=/dev/null",
        "-c safe.directory=* -c core.hooksPath=/dev/null",
    ] {
        assert!(line.contains(part), "{part} not in {line}");
    }
    assert!(!line.contains("/kid/.git"), "{line}");
    assert!(line.ends_with(" upload-pack"), "{line}");
    assert_eq!(
        fetch::quoted(&["a".into(), "b c".into()]).unwrap(),
        "'a' 'b c'"
    );
    assert!(fetch::quoted(&["it's".into()]).is_err());
}

#[test]
fn every_git_run_gets_hooks_off_and_only_the_file_protocol() {
    let args = git::safe_args(&["fetch"]).join(" ");
    for kv in [
        "-c core.hooksPath=/dev/null",
        "-c core.fsmonitor=false",
        "-c protocol.allow=never",
        "-c protocol.file.allow=always",
        "-c fetch.fsckObjects=true",
        "-c submodule.recurse=false",
    ] {
        assert!(args.contains(kv), "{kv}");
    }
    assert!(args.ends_with(" fetch"));
}

/// The manager swaps its proposed repo's `.git` for a link to a repo of
/// the host's (here a bundle file: one repo in one file), again and again,
/// so that some fetch passes the layout check with the real `.git` and
/// runs after the swap: the host repo's commit never reaches the applied
/// repo. (Before, root git fetched `<proposed>/<n>/.git`, followed the
/// link, found a file there and read it as a bundle; the sandbox bound the
/// link's host target. Now both get the repo's top directory, an entry
/// of the hive's that no agent can replace.)
#[tokio::test]
async fn a_dotgit_swapped_for_a_link_to_a_host_repo_after_the_check_fetches_nothing_of_it() {
    use crate::testing::{Attacker, commit, git, swap_for_a_link};
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let repos = Repos::new(&dir.path().join("state"), Sandbox::Off);
    let kid = id("kid");
    let files = [("agent.json".to_owned(), b"{}".to_vec())];
    repos.seed(&kid, &files, "seed", None).await.unwrap();
    let proposed = repos.proposed(&kid);
    let host = dir.path().join("host");
    std::fs::create_dir(&host).unwrap();
    git(&host, &["init", "-q"]);
    let secret = commit(&host, &[("secret", "the host's\n")]);
    let bundle = dir.path().join("host.bundle");
    git(
        &host,
        &["bundle", "create", "-q", bundle.to_str().unwrap(), "HEAD"],
    );
    let attacker = Attacker::start({
        let (dotgit, real) = (proposed.join(".git"), proposed.join(".git.real"));
        move || swap_for_a_link(&dotgit, &real, &bundle, Duration::from_millis(2))
    });
    for n in 0..40 {
        let _ = repos.fetch(&kid, &secret, n).await;
        if repos.has_object(&kid, &secret).await.unwrap() {
            break;
        }
    }
    drop(attacker);
    assert!(
        !repos.has_object(&kid, &secret).await.unwrap(),
        "the host repo's commit was fetched"
    );
}
