//! Test certificates made with the `openssl` CLI, for the TLS tests of both protocols (this
//! file is also `mysql`'s tests' `certs` module, by path): CAs, and a server certificate for
//! DNS:localhost only (so 127.0.0.1 fails a host-name check) signed by the first of them.

use std::path::Path;
use std::process::Command;

use testkit::run;

/// In `dir`: `<ca>.crt` and `<ca>.key` for each of `cas`, and `server.crt` and `server.key`
/// signed by the first.
pub fn make_certs(dir: &Path, cas: &[&str]) {
    let ossl = |args: &[&str]| {
        run(Command::new("openssl").args(args).current_dir(dir));
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for ca in cas {
        let (key, crt) = (format!("{ca}.key"), format!("{ca}.crt"));
        let mut args = vec!["req", "-x509"];
        args.extend(ec);
        args.extend(["-keyout", &key, "-out", &crt, "-days", "3"]);
        args.extend(["-subj", "/CN=stampede test CA"]);
        ossl(&args);
    }
    let mut args = vec!["req"];
    args.extend(ec);
    args.extend([
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    ossl(&args);
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let (ca_crt, ca_key) = (format!("{}.crt", cas[0]), format!("{}.key", cas[0]));
    ossl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        &ca_crt,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "3",
        "-extfile",
        "ext.cnf",
    ]);
}
