//! A real browser for the dashboard tests: Debian's Chromium driven through
//! chromium-driver (WebDriver) with fantoccini, and a loopback bridge to
//! web.sock (Chromium cannot open a Unix socket). `tests/run` installs
//! `chromium` and `chromium-driver`.

#![allow(clippy::disallowed_methods)] // test code runs the tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(dead_code)]

use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A loopback TCP port forwarding every connection to a Unix socket, both
/// ways, one thread per direction (the test's stand-in for a reverse proxy).
pub struct Bridge {
    pub port: u16,
}

impl Bridge {
    pub fn to(socket: &Path) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let socket = socket.to_path_buf();
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                let Ok(tcp) = tcp else { return };
                let Ok(unix) = UnixStream::connect(&socket) else {
                    continue;
                };
                let (tcp2, unix2) = (tcp.try_clone().unwrap(), unix.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut &tcp, &mut &unix);
                    let _ = unix.shutdown(Shutdown::Write);
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut &unix2, &mut &tcp2);
                    let _ = tcp2.shutdown(Shutdown::Write);
                });
            }
        });
        Self { port }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// chromium-driver on a loopback port, killed when dropped.
pub struct Driver {
    child: Child,
    pub port: u16,
}

impl Driver {
    pub fn start() -> Self {
        assert!(
            Path::new(CHROMEDRIVER).exists() && Path::new(CHROMIUM).exists(),
            "the browser tests need Debian's chromium and chromium-driver \
             (apt-get install --no-install-recommends chromium chromium-driver; tests/run does)"
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port }
    }

    /// A headless Chromium session (as root it needs --no-sandbox).
    pub async fn session(&self) -> Client {
        let caps = serde_json::json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,900"],
            },
        });
        let serde_json::Value::Object(caps) = caps else {
            unreachable!()
        };
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a Chromium session")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of the first element matching `css`, or "" when there is none.
pub async fn text(client: &Client, css: &str) -> String {
    match client.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Wait (polling the page from the test, up to `limit`) until `css`'s text
/// satisfies `ok`; how long it took.
pub async fn until_text(
    client: &Client,
    css: &str,
    limit: Duration,
    ok: impl Fn(&str) -> bool,
) -> Duration {
    let start = Instant::now();
    loop {
        let t = text(client, css).await;
        if ok(&t) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "{css} never matched within {limit:?}; last text {t:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Another web site on loopback (another origin) serving one page for every
/// request; its URL.
pub fn site(html: String) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{html}",
                html.len()
            );
        }
    });
    format!("http://localhost:{port}/")
}
