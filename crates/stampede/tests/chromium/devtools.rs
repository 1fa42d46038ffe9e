//! A page in headless Chromium driven through the Chrome DevTools Protocol
//! (<https://chromedevtools.github.io/devtools-protocol/>), for the HTML test's real input:
//! mouse events (`Input.dispatchMouseEvent`) and reading the page back (`Runtime.evaluate`).
//!
//! Chromium is started with `--remote-debugging-port=0` and says where it listens on stderr
//! (`DevTools listening on ws://HOST:PORT/devtools/browser/ID`); the test speaks to that
//! browser endpoint over a WebSocket (RFC 6455) written here, the small part a client needs:
//! the upgrade, masked text frames out, text frames in (fragmented or not). A library would
//! add a dependency to every build of the workspace's tests for these sixty lines. One
//! connection: the page is a target created and attached in flat mode, so its commands carry
//! the session id. Must not touch: what the page shows (the test asserts that).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub struct Page {
    child: Child,
    ws: TcpStream,
    next_id: u64,
    session: String,
    /// Chromium's stderr so far (console messages among it, with `--enable-logging=stderr`).
    pub log: Arc<Mutex<Vec<String>>>,
}

/// How the tests start Chromium: headless, with the flags that keep it off this machine's closed
/// network (background networking, component updates, sync) and its log on stderr.
pub const HEADLESS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
];

impl Page {
    /// Chromium on `page`, a window of `width` x `height`, the page loaded.
    pub fn open(bin: &Path, profile: &Path, page: &Path, width: u32, height: u32) -> Page {
        let mut child = Command::new(bin)
            .args(HEADLESS)
            .args(["--remote-debugging-port=0", "--remote-allow-origins=*"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--window-size={width},{height}"))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let err = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let keep = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(at) = line.find("DevTools listening on ws://") {
                    let _ = tx.send(line[at + 27..].trim().to_string());
                }
                keep.lock().unwrap().push(line);
            }
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!(
                "chromium did not say where DevTools listens:\n{}",
                log.lock().unwrap().join("\n")
            );
        };
        let (host, path) = url.split_at(url.find('/').expect("ws://host:port/path"));
        let mut ws = TcpStream::connect(host).expect("DevTools port");
        ws.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        handshake(&mut ws, host, path);
        let mut p = Page {
            child,
            ws,
            next_id: 0,
            session: String::new(),
            log,
        };
        let target = p.call("Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].as_str().expect("targetId").to_string();
        let attached = p.call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        p.session = attached["sessionId"].as_str().expect("sessionId").into();
        // The viewport fixed before the page loads, so that nothing resizes under the mouse.
        p.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        p.call(
            "Page.navigate",
            json!({"url": format!("file://{}", page.display())}),
        );
        p.wait_for(
            "location.protocol === 'file:' && document.readyState === 'complete'",
            "the page loads",
        );
        p
    }

    /// A command on the page's session; its result (panics on a protocol error).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        send(&mut self.ws, msg.to_string().as_bytes());
        loop {
            let v: Value = serde_json::from_slice(&receive(&mut self.ws)).expect("CDP JSON");
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression on the page (panics on an exception).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expr}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Wait until `expr` is true on the page (polled; 30 s at most).
    pub fn wait_for(&mut self, expr: &str, what: &str) {
        let start = Instant::now();
        while self.eval(&format!("!!({expr})")) != json!(true) {
            assert!(start.elapsed() < Duration::from_secs(30), "{what}: {expr}");
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// A mouse event at (x, y) in CSS pixels of the viewport: `kind` is `mouseMoved`,
    /// `mousePressed` or `mouseReleased`; `pressed` whether the left button is down.
    pub fn mouse(&mut self, kind: &str, x: f64, y: f64, pressed: bool) {
        let mut p = json!({"type": kind, "x": x, "y": y, "buttons": if pressed { 1 } else { 0 }});
        if kind != "mouseMoved" || pressed {
            p["button"] = json!("left");
        }
        if kind != "mouseMoved" {
            p["clickCount"] = json!(1);
        }
        self.call("Input.dispatchMouseEvent", p);
    }

    /// A left click at (x, y).
    pub fn click(&mut self, x: f64, y: f64) {
        self.mouse("mouseMoved", x, y, false);
        self.mouse("mousePressed", x, y, true);
        self.mouse("mouseReleased", x, y, false);
    }

    /// The element's box in the viewport after scrolling it to the middle: (left, top, width,
    /// height).
    pub fn rect(&mut self, selector: &str) -> (f64, f64, f64, f64) {
        let r = self.eval(&format!(
            "(() => {{ const e = document.querySelector({s}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.left, r.top, r.width, r.height]; }})()",
            s = json!(selector)
        ));
        let v: Vec<f64> = r
            .as_array()
            .unwrap_or_else(|| panic!("no element {selector}"))
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        (v[0], v[1], v[2], v[3])
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The WebSocket upgrade (RFC 6455 section 4.1); the server's accept key is not checked (the
/// peer is the Chromium this test started).
fn handshake(ws: &mut TcpStream, host: &str, path: &str) {
    write!(
        ws,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        ws.read_exact(&mut b).expect("upgrade response");
        head.push(b[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101"), "upgrade refused: {head}");
}

/// One text frame, masked as a client's must be (section 5.3).
fn send(ws: &mut TcpStream, payload: &[u8]) {
    let mask = [0x5a, 0x17, 0xc3, 0x88];
    let mut f = vec![0x81u8];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= 0xffff => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    ws.write_all(&f).expect("frame sent");
}

/// One message: its frames' payloads up to the final one (section 5.4); the server's frames are
/// not masked.
fn receive(ws: &mut TcpStream) -> Vec<u8> {
    let mut msg = Vec::new();
    loop {
        let mut h = [0u8; 2];
        ws.read_exact(&mut h).expect("frame header");
        let (fin, opcode) = (h[0] & 0x80 != 0, h[0] & 0x0f);
        assert_eq!(h[1] & 0x80, 0, "a server frame is not masked");
        let len = match h[1] & 0x7f {
            126 => {
                let mut l = [0u8; 2];
                ws.read_exact(&mut l).unwrap();
                u16::from_be_bytes(l) as usize
            }
            127 => {
                let mut l = [0u8; 8];
                ws.read_exact(&mut l).unwrap();
                u64::from_be_bytes(l) as usize
            }
            n => n as usize,
        };
        let mut data = vec![0u8; len];
        ws.read_exact(&mut data).expect("frame payload");
        assert_ne!(opcode, 0x8, "DevTools closed the connection");
        if opcode == 0x9 || opcode == 0xa {
            continue; // ping or pong: Chromium sends none; nothing to answer for a test
        }
        msg.extend_from_slice(&data);
        if fin {
            return msg;
        }
    }
}
