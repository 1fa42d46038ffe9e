//! The authentication plugins' client side, as pure functions: what to answer to a server's
//! scramble for each plugin this client speaks.
//!
//! * `mysql_native_password` ("Native Authentication"):
//!   `SHA1(password) XOR SHA1(scramble || SHA1(SHA1(password)))`.
//! * `caching_sha2_password` ("Caching_sha2_password information", MySQL 8): the fast path's
//!   `SHA256(password) XOR SHA256(SHA256(SHA256(password)) || scramble)`; the full path's
//!   cleartext password (NUL-terminated) over TLS or a unix socket, or over plain TCP the
//!   password XOR-ed with the scramble and encrypted with the server's RSA public key
//!   (RSA_PKCS1_OAEP_PADDING, i.e. OAEP with SHA-1 and MGF1-SHA-1).
//! * `mysql_clear_password`: the cleartext password, only over a secure transport.
//! * Everything else (MariaDB's `client_ed25519`, `auth_gssapi_client`, MySQL's
//!   `sha256_password`, ...) is refused with an error that names the plugin and what to do.
//!
//! SHA-1 and SHA-256 come from `ring` (already linked through rustls); RSA-OAEP from the `rsa`
//! crate (RustCrypto; only public-key encryption is used, which its 2023 timing advisory about
//! decryption does not concern).

use ring::digest::{digest, Context, SHA1_FOR_LEGACY_USE_ONLY, SHA256};

pub(crate) const NATIVE: &str = "mysql_native_password";
pub(crate) const CACHING_SHA2: &str = "caching_sha2_password";
pub(crate) const CLEAR: &str = "mysql_clear_password";

/// caching_sha2_password's AuthMoreData bytes ("fast_auth_success" and
/// "perform_full_authentication") and the client's request for the server's public key.
pub(crate) const FAST_AUTH_OK: u8 = 3;
pub(crate) const FULL_AUTH: u8 = 4;
pub(crate) const REQUEST_PUBLIC_KEY: u8 = 2;

/// The 20 bytes of scramble a server sends (the part-2 of the handshake and an auth switch's
/// data end with a NUL that is not part of it).
pub(crate) fn scramble_of(data: &[u8]) -> &[u8] {
    match data {
        [s @ .., 0] => s,
        s => s,
    }
}

/// mysql_native_password's answer; empty for an empty password (as libmysqlclient).
pub(crate) fn native(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = digest(&SHA1_FOR_LEGACY_USE_ONLY, password);
    let stage2 = digest(&SHA1_FOR_LEGACY_USE_ONLY, stage1.as_ref());
    let mut ctx = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(scramble);
    ctx.update(stage2.as_ref());
    let mix = ctx.finish();
    xor(stage1.as_ref(), mix.as_ref())
}

/// caching_sha2_password's fast-path answer; empty for an empty password.
pub(crate) fn caching_sha2(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let p1 = digest(&SHA256, password);
    let p2 = digest(&SHA256, p1.as_ref());
    let mut ctx = Context::new(&SHA256);
    ctx.update(p2.as_ref());
    ctx.update(scramble);
    let mix = ctx.finish();
    xor(p1.as_ref(), mix.as_ref())
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

/// The cleartext answer: the password and a NUL.
pub(crate) fn cleartext(password: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(password.len() + 1);
    v.extend_from_slice(password);
    v.push(0);
    v
}

/// caching_sha2_password's full path over plain TCP: `(password || NUL) XOR scramble` (the
/// scramble repeated), encrypted with the server's public key (`pem`: "BEGIN PUBLIC KEY", or
/// PKCS#1 "BEGIN RSA PUBLIC KEY") with OAEP/SHA-1. The error never contains the password.
pub(crate) fn rsa_encrypt_password(
    password: &[u8],
    scramble: &[u8],
    pem: &[u8],
) -> Result<Vec<u8>, String> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let pem = std::str::from_utf8(pem)
        .map_err(|_| "the server's public key is not PEM text".to_string())?
        .trim_end_matches('\0')
        .trim();
    let key = rsa::RsaPublicKey::from_public_key_pem(pem)
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(pem))
        .map_err(|e| format!("the server's RSA public key could not be read: {e}"))?;
    if scramble.is_empty() {
        return Err("empty scramble".into());
    }
    let mut plain = cleartext(password);
    for (i, b) in plain.iter_mut().enumerate() {
        *b ^= scramble[i % scramble.len()];
    }
    key.encrypt(
        &mut rand_core::OsRng,
        rsa::Oaep::new::<sha1::Sha1>(),
        &plain,
    )
    .map_err(|e| format!("RSA encryption of the password failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|c| format!("{c:02x}")).collect()
    }

    /// The 20-byte scramble of the vectors below: bytes 0x01..=0x14.
    fn scramble() -> Vec<u8> {
        (1..=20).collect()
    }

    // The expected values were computed outside this code with openssl, e.g. for native:
    //   s1=$(printf 'secret' | openssl sha1 -binary | xxd -p)
    //   s2=$(printf 'secret' | openssl sha1 -binary | openssl sha1 -binary | xxd -p)
    //   mix=$( (printf '0102030405060708090a0b0c0d0e0f1011121314'; echo -n $s2) | xxd -r -p \
    //          | openssl sha1 -binary | xxd -p)
    //   then s1 XOR mix (python3 -c 'print(hex(int(a,16)^int(b,16)))').
    // and likewise with sha256 for caching_sha2 (SHA256(SHA256(SHA256(pw)) || scramble) XOR
    // SHA256(pw)).

    #[test]
    fn native_password_scramble_matches_openssl() {
        assert_eq!(
            hex(&native(b"secret", &scramble())),
            "b32bb3a583e1340c0a1108d58b1be49781ad8c2f"
        );
        assert!(native(b"", &scramble()).is_empty());
    }

    #[test]
    fn caching_sha2_scramble_matches_openssl() {
        assert_eq!(
            hex(&caching_sha2(b"secret", &scramble())),
            "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"
        );
        assert!(caching_sha2(b"", &scramble()).is_empty());
    }

    #[test]
    fn scramble_drops_the_trailing_nul() {
        let mut s = scramble();
        s.push(0);
        assert_eq!(scramble_of(&s), &scramble()[..]);
        assert_eq!(scramble_of(&scramble()), &scramble()[..]);
    }

    /// The full path's RSA encryption, checked by decrypting with openssl (OAEP, SHA-1, MGF1
    /// SHA-1: what the server's RSA_PKCS1_OAEP_PADDING means) and undoing the XOR: the password
    /// and its NUL come back. Both PEM forms a server may send are read.
    #[test]
    fn rsa_full_path_decrypts_with_openssl() {
        use std::process::Command;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ossl = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .expect("openssl (apt-get install openssl)");
            assert!(out.status.success(), "openssl {args:?}: {out:?}");
        };
        ossl(&["genrsa", "-out", "key.pem", "2048"]);
        ossl(&["rsa", "-in", "key.pem", "-pubout", "-out", "spki.pem"]);
        ossl(&[
            "rsa",
            "-in",
            "key.pem",
            "-RSAPublicKey_out",
            "-out",
            "pkcs1.pem",
        ]);
        for public in ["spki.pem", "pkcs1.pem"] {
            let pem = std::fs::read(d.join(public)).unwrap();
            let enc = rsa_encrypt_password(b"secret", &scramble(), &pem).unwrap();
            assert_eq!(enc.len(), 256);
            std::fs::write(d.join("enc.bin"), &enc).unwrap();
            ossl(&[
                "pkeyutl",
                "-decrypt",
                "-inkey",
                "key.pem",
                "-in",
                "enc.bin",
                "-out",
                "dec.bin",
                "-pkeyopt",
                "rsa_padding_mode:oaep",
                "-pkeyopt",
                "rsa_oaep_md:sha1",
                "-pkeyopt",
                "rsa_mgf1_md:sha1",
            ]);
            let dec = std::fs::read(d.join("dec.bin")).unwrap();
            let plain: Vec<u8> = dec
                .iter()
                .enumerate()
                .map(|(i, b)| b ^ scramble()[i % 20])
                .collect();
            assert_eq!(plain, b"secret\0", "{public}");
        }
        let e = rsa_encrypt_password(b"secret", &scramble(), b"-----BEGIN PUBLIC KEY-----\nxx")
            .unwrap_err();
        assert!(
            e.contains("could not be read") && !e.contains("secret"),
            "{e}"
        );
    }
}
