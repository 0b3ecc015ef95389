//! Benchmark (prints figures; not a test): the dashboard with 500 agents,
//! in-process with the fake driver and a real SQLite file, each figure next
//! to its floor measured in the same run:
//! - roster page load over web.sock (`GET /`, 500 rendered rows) against
//!   host.sock's `agent_status` (the same 500 rows as one JSON line);
//! - live update latency, unit change → `row` event on `/events/roster`,
//!   against unit change → row line on a host.sock `subscribe_agent_status`
//!   stream (the same in-process feed);
//! - with Debian's Chromium installed: the page in a real browser (load to
//!   `live`, and unit change → the row changed in the DOM).
//!
//! Run: `cargo run --release --example bench_web`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // it starts chromedriver

#[path = "../tests/support/browser/mod.rs"]
mod browser;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use hive_c0re::containers::fake::FakeDriver;
use hive_c0re::service::Hive;
use hive_c0re::wire::host::LifecycleScope;
use hive_c0re::wire::ident::Ident;
use support::listen;

const AGENTS: usize = 500;
const LOADS: usize = 100;
const PUSHES: usize = 200;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (percentile(&v, 0.5), percentile(&v, 0.99))
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

fn get_page(web: &Path) -> usize {
    let mut s = UnixStream::connect(web).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut page = Vec::new();
    s.read_to_end(&mut page).unwrap();
    assert!(page.starts_with(b"HTTP/1.1 200"));
    page.len()
}

fn main() {
    let bench = support::hive_with(AGENTS);
    let (rt, driver, hive) = (&bench.rt, &bench.driver, &bench.hive);
    let (socket, web_socket) = (bench.config.host_socket(), bench.config.web_socket());
    let web = hive_c0re::web::Web::new(hive.clone(), bench.shutdown.clone()).unwrap();
    let web_listener = {
        let _runtime = rt.enter();
        listen(&web_socket)
    };
    rt.spawn(hive_c0re::web::serve(web_listener, web));

    // Page load against the floor: the same rows as host.sock JSON.
    let mut floor = Vec::new();
    let mut json_bytes = 0;
    for _ in 0..LOADS {
        let t = Instant::now();
        let mut s = UnixStream::connect(&socket).unwrap();
        s.write_all(b"{\"cmd\":\"agent_status\"}\n").unwrap();
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).unwrap();
        floor.push(t.elapsed());
        json_bytes = line.len();
    }
    let mut page = Vec::new();
    let mut page_bytes = 0;
    for _ in 0..LOADS {
        let t = Instant::now();
        page_bytes = get_page(&web_socket);
        page.push(t.elapsed());
    }
    let (f50, f99) = summary(floor);
    let (p50, p99) = summary(page);
    println!(
        "roster page, {AGENTS} agents: GET / p50 {p50:.2?} p99 {p99:.2?} ({page_bytes} bytes); \
         floor host.sock agent_status p50 {f50:.2?} p99 {f99:.2?} ({json_bytes} bytes); \
         ratio p50 {:.2}x",
        ratio(p50, f50)
    );

    // Live update latency: host.sock subscriber and SSE reader on the same
    // changes; each change is timed at both.
    let mut sub = UnixStream::connect(&socket).unwrap();
    sub.write_all(b"{\"cmd\":\"subscribe_agent_status\"}\n")
        .unwrap();
    let mut sub = BufReader::new(sub);
    let mut line = String::new();
    sub.read_line(&mut line).unwrap();
    let mut sse = UnixStream::connect(&web_socket).unwrap();
    sse.write_all(b"GET /events/roster HTTP/1.1\r\nHost: bench\r\n\r\n")
        .unwrap();
    let mut sse = BufReader::new(sse);
    until_line(&mut sse, "event: ready");
    // Each stream is read on its own thread, which notes when the row it
    // waits for arrived; the main thread notes when it caused the change.
    let needles = |json: bool| {
        (0..PUSHES).map(move |i| match (i.is_multiple_of(2), json) {
            (true, true) => r#""name":"agent-7","running":false"#,
            (false, true) => r#""name":"agent-7","running":true"#,
            (true, false) => ">failed<",
            (false, false) => ">running<",
        })
    };
    // Lockstep: the next change only once both saw this one (a row reads
    // the state at publish time, so two quick changes could show as one).
    let reader = |mut r: BufReader<UnixStream>, json: bool| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for needle in needles(json) {
                until_line(&mut r, needle);
                if tx.send(Instant::now()).is_err() {
                    return;
                }
            }
        });
        rx
    };
    let (at_sub_rx, at_sse_rx) = (reader(sub, true), reader(sse, false));
    let name = Ident::new("agent-7").unwrap();
    let (mut at_sub, mut at_sse) = (Vec::new(), Vec::new());
    for i in 0..PUSHES {
        let caused = Instant::now();
        change(rt, hive, driver, &name, i);
        let wait = Duration::from_secs(10);
        at_sub.push(at_sub_rx.recv_timeout(wait).unwrap().duration_since(caused));
        at_sse.push(at_sse_rx.recv_timeout(wait).unwrap().duration_since(caused));
    }
    let (s50, s99) = summary(at_sub);
    let (e50, e99) = summary(at_sse);
    println!(
        "unit change -> row: SSE /events/roster p50 {e50:.2?} p99 {e99:.2?}; \
         floor host.sock subscriber p50 {s50:.2?} p99 {s99:.2?}; ratio p50 {:.2}x",
        ratio(e50, s50)
    );

    if Path::new(browser::CHROMEDRIVER).exists() {
        rt.block_on(in_chromium(hive, driver, &web_socket, p50));
    } else {
        println!("in Chromium: skipped (install chromium and chromium-driver)");
    }
}

/// Read lines until one contains `needle`.
fn until_line(r: &mut BufReader<UnixStream>, needle: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(r.read_line(&mut line).unwrap() > 0, "stream ended");
        if line.contains(needle) {
            return;
        }
    }
}

/// Flip an agent: crash it (even), start it again (odd).
fn change(rt: &tokio::runtime::Runtime, hive: &Hive, driver: &FakeDriver, name: &Ident, i: usize) {
    if i.is_multiple_of(2) {
        driver.crash(name);
    } else {
        rt.block_on(hive.start(&LifecycleScope::agents(vec![name.clone()])))
            .unwrap();
    }
}

async fn in_chromium(hive: &Hive, driver: &FakeDriver, web_socket: &Path, socket_p50: Duration) {
    let bridge = browser::Bridge::to(web_socket);
    let chromedriver = browser::Driver::start();
    let client = chromedriver.session().await;
    let mut loads = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        client.goto(&bridge.url("/")).await.unwrap();
        browser::until_text(&client, "#live", Duration::from_secs(10), |t| t == "live").await;
        loads.push(t.elapsed());
    }
    let (l50, l99) = summary(loads);
    println!(
        "in Chromium, {AGENTS} agents: navigate -> rendered and live p50 {l50:.2?} p99 {l99:.2?} \
         (ratio to the socket-level GET p50: {:.1}x)",
        ratio(l50, socket_p50)
    );
    // A row change as the page sees it: the page notes when the row's
    // state text changed (a MutationObserver), the bench when it caused it.
    let name = Ident::new("agent-300").unwrap();
    let mut seen = Vec::new();
    for i in 0..40_u32 {
        // Let the previous change's trailing rows arrive first.
        tokio::time::sleep(Duration::from_millis(50)).await;
        client
            .execute(
                "window.changedAt = null; const t = document.querySelector('#roster tbody');\
                 const o = new MutationObserver(() => { if (document.getElementById('row-agent-300')) \
                 { window.changedAt = performance.timeOrigin + performance.now(); o.disconnect(); } });\
                 o.observe(t, {childList: true, subtree: true}); return 1",
                vec![],
            )
            .await
            .unwrap();
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        if i.is_multiple_of(2) {
            driver.crash(&name);
        } else {
            hive.start(&LifecycleScope::agents(vec![name.clone()]))
                .await
                .unwrap();
        }
        let at = loop {
            let v = client
                .execute("return window.changedAt", vec![])
                .await
                .unwrap();
            if let Some(ms) = v.as_f64() {
                break ms;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let ms = at - before.as_secs_f64() * 1000.0;
        seen.push(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let (c50, c99) = summary(seen);
    println!("in Chromium: unit change -> row replaced in the DOM p50 {c50:.2?} p99 {c99:.2?}");
    client.close().await.unwrap();
}
