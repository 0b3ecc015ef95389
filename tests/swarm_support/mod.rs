//! A swarm on one machine, for `tests/swarm.rs` and the swarm benchmark:
//! a real three-node NATS JetStream cluster on loopback (Debian's
//! `nats-server`, each node with its own store directory, users with the
//! per-hive permissions `src/swarm/README.md` documents), hives of the real
//! `hive-c0re` binary (`--driver fake`), and a TCP relay that can cut one
//! hive off the bus.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: a panic fails the test
#![allow(dead_code)] // the test and the benchmark use different parts

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
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

/// The `hive-c0re` binary cargo built for this test (integration tests
/// know its path; elsewhere, the one beside the running executable's
/// directory).
pub fn hive_bin() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_hive-c0re") {
        Some(p) => p.into(),
        None => {
            let exe = std::env::current_exe().unwrap();
            exe.parent().unwrap().parent().unwrap().join("hive-c0re")
        }
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

/// The password of `user` in the test cluster.
pub fn password(user: &str) -> String {
    format!("pw-{user}")
}

/// The NATS permissions of hive `hive` in swarm [`SWARM`]: the block
/// `src/swarm/README.md` documents, in the server's config syntax.
pub fn hive_permissions(hive: &str) -> String {
    let s = SWARM;
    let publish = [
        format!("hive.{s}.inbox.*.{hive}"),
        format!("$JS.API.STREAM.INFO.HIVE-{s}"),
        format!("$JS.API.STREAM.CREATE.HIVE-{s}"),
        format!("$JS.API.CONSUMER.INFO.HIVE-{s}.inbox-{hive}"),
        format!("$JS.API.CONSUMER.CREATE.HIVE-{s}.inbox-{hive}.hive.{s}.inbox.{hive}.*"),
        format!("$JS.API.CONSUMER.MSG.NEXT.HIVE-{s}.inbox-{hive}"),
        format!("$JS.ACK.HIVE-{s}.inbox-{hive}.>"),
        format!("$KV.hive-{s}-roster.{hive}.>"),
        format!("$JS.API.STREAM.INFO.KV_hive-{s}-roster"),
        format!("$JS.API.STREAM.CREATE.KV_hive-{s}-roster"),
        format!("$JS.API.CONSUMER.CREATE.KV_hive-{s}-roster"),
        format!("$JS.API.CONSUMER.DELETE.KV_hive-{s}-roster.*"),
        format!("$JS.FC.KV_hive-{s}-roster.>"),
    ];
    let quoted: Vec<String> = publish.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        "{{ user: \"{hive}\", password: \"{pw}\", permissions: {{ publish: {{ allow: [{}] }}, subscribe: {{ allow: [\"_INBOX.{s}.{hive}.>\"] }} }} }}",
        quoted.join(", "),
        pw = password(hive),
    )
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
        let child = Command::new(nats_server_bin())
            .arg("-c")
            .arg(&self.config)
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
        let dir = tempfile::tempdir().unwrap();
        let cluster_ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let routes: Vec<String> = cluster_ports
            .iter()
            .map(|p| format!("\"nats-route://127.0.0.1:{p}\""))
            .collect();
        let mut users: Vec<String> = hives.iter().map(|h| hive_permissions(h)).collect();
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
    fn wait_for_jetstream(&self) {
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
            let js = async_nats::jetstream::new(client);
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

/// One hive: the real daemon with the fake driver, in the swarm.
pub struct Hive {
    pub name: String,
    pub dir: PathBuf,
    pub urls: Vec<String>,
    child: Option<Child>,
    notify: Option<UnixDatagram>,
}

impl Hive {
    /// Write the hive's config (bus at `urls`, as user `name`) and start it;
    /// wait for READY=1.
    pub fn start(base: &Path, name: &str, urls: Vec<String>) -> Self {
        let dir = base.join(name);
        std::fs::create_dir_all(dir.join("run")).unwrap();
        let mut hive = Self {
            name: name.into(),
            dir,
            urls,
            child: None,
            notify: None,
        };
        hive.launch();
        hive
    }

    fn launch(&mut self) {
        let pw = self.dir.join("nats-password");
        std::fs::write(&pw, format!("{}\n", password(&self.name))).unwrap();
        let config = serde_json::json!({
            "hive_name": self.name,
            "swarm_name": SWARM,
            "swarm": {
                "urls": self.urls,
                "user": self.name,
                "password_file": pw,
                "replicas": 3,
            },
        });
        let config_path = self.dir.join("config.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let notify_path = self.dir.join("notify.sock");
        let _ = std::fs::remove_file(&notify_path);
        let notify = UnixDatagram::bind(&notify_path).unwrap();
        notify
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let child = Command::new(hive_bin())
            .args(["serve", "--driver", "fake", "--config"])
            .arg(&config_path)
            .arg("--state-dir")
            .arg(self.dir.join("state"))
            .arg("--runtime-dir")
            .arg(self.dir.join("run"))
            .env("NOTIFY_SOCKET", &notify_path)
            .env(
                "RUST_LOG",
                std::env::var("HIVE_SWARM_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdout(Stdio::null())
            .stderr(if std::env::var_os("HIVE_SWARM_LOG").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .unwrap();
        self.child = Some(child);
        let mut buf = vec![0u8; 4096];
        loop {
            let n = notify
                .recv(&mut buf)
                .unwrap_or_else(|e| panic!("no READY=1 from hive {}: {e}", self.name));
            if String::from_utf8_lossy(&buf[..n]).contains("READY=1") {
                break;
            }
        }
        self.notify = Some(notify);
    }

    /// SIGKILL the daemon (its state directory stays).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// Start it again on the same state; wait for READY=1.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    pub fn host_socket(&self) -> PathBuf {
        self.dir.join("run/host.sock")
    }

    pub fn agent_socket(&self, agent: &str) -> PathBuf {
        self.dir.join("run/agents").join(agent).join("mcp.sock")
    }

    /// One host.sock request line, its answer line.
    pub fn request(&self, line: &str) -> String {
        let mut s = UnixStream::connect(self.host_socket()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(format!("{line}\n").as_bytes()).unwrap();
        let mut answer = String::new();
        BufReader::new(s).read_line(&mut answer).unwrap();
        answer.trim_end().to_owned()
    }

    pub fn spawn_agents(&self, names: &[String]) {
        for a in names {
            let answer = self.request(&format!(r#"{{"cmd":"spawn","name":"{a}"}}"#));
            assert_eq!(answer, r#"{"version":1,"ok":true}"#, "spawn {a}");
        }
    }
}

impl Drop for Hive {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A connection to an agent socket; `None` answers once the hive is gone.
pub struct AgentConn {
    reader: BufReader<UnixStream>,
}

impl AgentConn {
    pub fn open(socket: &Path) -> Option<Self> {
        let s = UnixStream::connect(socket).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Some(Self {
            reader: BufReader::new(s),
        })
    }

    /// Connect, retrying while the hive restarts (up to 60 s).
    pub fn open_retrying(socket: &Path) -> Self {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(c) = Self::open(socket) {
                return c;
            }
            assert!(
                Instant::now() < deadline,
                "{} never came back",
                socket.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn ask(&mut self, line: &str) -> Option<String> {
        self.reader
            .get_mut()
            .write_all(format!("{line}\n").as_bytes())
            .ok()?;
        let mut answer = String::new();
        self.reader.read_line(&mut answer).ok()?;
        answer.ends_with('\n').then(|| answer.trim_end().to_owned())
    }

    /// `send`; true when acknowledged.
    pub fn send(&mut self, to: &str, body: &str) -> Option<bool> {
        let line = serde_json::json!({"cmd": "send", "to": to, "body": body}).to_string();
        let answer = self.ask(&line)?;
        Some(answer == r#"{"kind":"ok"}"#)
    }

    /// `recv` (long poll up to `wait_seconds`), then `ack_turn`: the
    /// messages as (from, body).
    pub fn take(&mut self, wait_seconds: u64, max: u32) -> Option<Vec<(String, String)>> {
        let answer = self.ask(&format!(
            r#"{{"cmd":"recv","wait_seconds":{wait_seconds},"max":{max}}}"#
        ))?;
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(v["kind"], "messages", "{answer}");
        let out: Vec<(String, String)> = v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["from"].as_str().unwrap().to_owned(),
                    m["body"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        if !out.is_empty() {
            self.ask(r#"{"cmd":"ack_turn"}"#)?;
        }
        Some(out)
    }
}
