//! A swarm's bus on one machine, for `tests/swarm.rs` and the swarm
//! benchmark: a real three-node NATS JetStream cluster on loopback (Debian's
//! `nats-server`, each node with its own store directory, users with the
//! per-hive permissions `src/swarm/README.md` documents), and a TCP relay
//! that can cut one hive off the bus. The hives themselves: `hive.rs`.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: a panic fails the test
#![allow(dead_code)] // the test and the benchmark use different parts

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The swarm every test hive joins.
pub const SWARM: &str = "t";

/// The `nats-server` binary: `$NATS_SERVER`, else Debian's path, else PATH.
pub fn nats_server_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("NATS_SERVER") {
        return p.into();
    }
    let debian = PathBuf::from("/usr/sbin/nats-server");
    if debian.exists() {
        debian
    } else {
        "nats-server".into()
    }
}

/// A free loopback port (bound, then released: good enough on a test box).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Until `f` holds (checked every 100 ms), or panic after `limit`.
pub fn wait_until(limit: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The password of `user` in the test cluster.
pub fn password(user: &str) -> String {
    format!("pw-{user}")
}

/// The NATS user of hive `hive` in swarm [`SWARM`]: the daemon's own
/// permission table (`hive_c0re::swarm::permissions`, which
/// `src/swarm/README.md` shows), in the server's config syntax.
pub fn hive_permissions(hive: &str) -> String {
    hive_c0re::swarm::permissions::nats_user(SWARM, hive, &password(hive))
}

/// One `nats-server` of the cluster.
pub struct Node {
    pub name: String,
    pub port: u16,
    config: PathBuf,
    child: Option<Child>,
}

impl Node {
    fn start(&mut self) {
        let mut cmd = Command::new(nats_server_bin());
        cmd.arg("-c").arg(&self.config);
        // HIVE_NATS_LOG=DIR: each node logs to DIR/<node>.log (permission
        // violations among it), for a failed run.
        if let Some(dir) = std::env::var_os("HIVE_NATS_LOG") {
            cmd.arg("-l")
                .arg(PathBuf::from(dir).join(format!("{}.log", self.name)));
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run nats-server (apt-get install nats-server)");
        self.child = Some(child);
        wait_tcp(self.port);
    }

    /// SIGKILL this node (a crash; its store directory stays).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Wait until something listens on loopback `port`.
pub fn wait_tcp(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A three-node JetStream cluster on loopback, with one user per hive and
/// an unrestricted `admin`.
pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub nodes: Vec<Node>,
}

impl Cluster {
    pub fn start(hives: &[&str]) -> Self {
        Self::start_with(hives, |_, user| user)
    }

    /// [`Cluster::start`] with each hive's user block (its permissions) as
    /// `tweak(hive, block)` makes it: for a test that takes a permission away.
    pub fn start_with(hives: &[&str], tweak: impl Fn(&str, String) -> String) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cluster_ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let routes: Vec<String> = cluster_ports
            .iter()
            .map(|p| format!("\"nats-route://127.0.0.1:{p}\""))
            .collect();
        let mut users: Vec<String> = hives
            .iter()
            .map(|h| tweak(h, hive_permissions(h)))
            .collect();
        users.push(format!(
            "{{ user: \"admin\", password: \"{}\" }}",
            password("admin")
        ));
        let mut nodes = Vec::new();
        for (i, cport) in cluster_ports.iter().enumerate() {
            let name = format!("n{}", i + 1);
            let port = free_port();
            let store = dir.path().join(&name);
            let config = dir.path().join(format!("{name}.conf"));
            let text = format!(
                "server_name: {name}\nlisten: \"127.0.0.1:{port}\"\n\
                 jetstream {{ store_dir: \"{}\", max_memory_store: 64MB, max_file_store: 1GB }}\n\
                 cluster {{ name: hivetest, listen: \"127.0.0.1:{cport}\", routes: [{}] }}\n\
                 authorization {{ users: [\n{}\n] }}\n",
                store.display(),
                routes.join(", "),
                users.join(",\n"),
            );
            std::fs::write(&config, text).unwrap();
            nodes.push(Node {
                name,
                port,
                config,
                child: None,
            });
        }
        for n in &mut nodes {
            n.start();
        }
        let cluster = Self { dir, nodes };
        cluster.wait_for_jetstream();
        cluster
    }

    /// Restart node `i` on its old port and store.
    pub fn restart(&mut self, i: usize) {
        self.nodes[i].kill();
        self.nodes[i].start();
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Node::url).collect()
    }

    /// Until the cluster has elected a JetStream meta leader (an admin can
    /// create and delete a stream).
    /// Run `f` with a JetStream context of the cluster's admin user, on a
    /// runtime of its own (the tests are synchronous).
    fn with_admin<T>(&self, f: impl AsyncFnOnce(async_nats::jetstream::Context) -> T) -> T {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let urls = self.urls();
        rt.block_on(async move {
            let client = async_nats::ConnectOptions::new()
                .user_and_password("admin".into(), password("admin"))
                .connect(urls)
                .await
                .unwrap();
            f(async_nats::jetstream::new(client)).await
        })
    }

    fn wait_for_jetstream(&self) {
        self.with_admin(async |js| {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let made = js
                    .create_stream(async_nats::jetstream::stream::Config {
                        name: "PROBE".into(),
                        subjects: vec!["probe".into()],
                        num_replicas: 3,
                        ..Default::default()
                    })
                    .await;
                if made.is_ok() {
                    let _ = js.delete_stream("PROBE").await;
                    return;
                }
                assert!(Instant::now() < deadline, "no JetStream leader: {made:?}");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
    }

    /// Wait until every replica of each of `streams` is online and current
    /// (a restarted node has caught up), so the next fault finds a quorum.
    pub fn wait_until_replicas_current(&self, streams: &[&str]) {
        self.with_admin(async |js| {
            let deadline = Instant::now() + Duration::from_secs(60);
            for name in streams {
                loop {
                    let current = match js.get_stream(*name).await {
                        Ok(mut stream) => stream.info().await.ok().and_then(|i| i.cluster.clone()),
                        Err(_) => None,
                    }
                    .is_some_and(|c| {
                        c.leader.is_some()
                            && c.replicas.len() == 2
                            && c.replicas.iter().all(|p| p.current && !p.offline)
                    });
                    if current {
                        break;
                    }
                    assert!(
                        Instant::now() < deadline,
                        "replicas of {name} never caught up"
                    );
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        });
    }
}

/// A TCP relay in front of each cluster node; `block` cuts every
/// connection through it and refuses new ones until `unblock`.
pub struct Cutter {
    pub ports: Vec<u16>,
    blocked: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Cutter {
    pub fn new(targets: &[u16]) -> Self {
        let blocked = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let mut ports = Vec::new();
        for &target in targets {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            ports.push(listener.local_addr().unwrap().port());
            let (blocked, open) = (blocked.clone(), open.clone());
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    let Ok(client) = client else { continue };
                    if blocked.load(Ordering::SeqCst) {
                        continue; // dropped: the connection is refused
                    }
                    let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                        continue;
                    };
                    {
                        let mut open = open.lock().unwrap();
                        open.push(client.try_clone().unwrap());
                        open.push(server.try_clone().unwrap());
                    }
                    pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                    pipe(server, client);
                }
            });
        }
        Self {
            ports,
            blocked,
            open,
        }
    }

    pub fn urls(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| format!("nats://127.0.0.1:{p}"))
            .collect()
    }

    pub fn block(&self) {
        self.blocked.store(true, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    pub fn unblock(&self) {
        self.blocked.store(false, Ordering::SeqCst);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(std::net::Shutdown::Both);
    });
}
