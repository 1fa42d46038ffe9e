//! The connection of the floor clients (bench/floor.rs, bench/floor_mysql.rs): a blocking unix
//! socket (an absolute path) or TCP with Nagle off (HOST:PORT). Included by both with `#[path]`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

pub trait Conn: Read + Write {}
impl Conn for UnixStream {}
impl Conn for TcpStream {}

pub fn connect(addr: &str) -> Box<dyn Conn> {
    if addr.starts_with('/') {
        Box::new(UnixStream::connect(addr).expect("connect to the unix socket"))
    } else {
        let s = TcpStream::connect(addr).expect("connect over TCP");
        s.set_nodelay(true).unwrap();
        Box::new(s)
    }
}
