//! What an RDS or Aurora endpoint's host name says about the resource behind it, for
//! `--cloudwatch`: an instance, a cluster (writer or readers), a Limitless shard group, or
//! nothing CloudWatch can be asked about by that name (custom and proxy endpoints, any other
//! host). Pure: no DNS, no AWS call.
//!
//! The names RDS gives (Amazon RDS User Guide, "Connecting to a DB instance"; Aurora User
//! Guide, "Types of Aurora endpoints"; "Connecting to your Aurora PostgreSQL Limitless Database
//! DB cluster"):
//! - instance: `<instance-id>.<hash>.<region>.rds.amazonaws.com`
//! - cluster (writer): `<cluster-id>.cluster-<hash>.<region>.rds.amazonaws.com`
//! - cluster readers: `<cluster-id>.cluster-ro-<hash>.<region>.rds.amazonaws.com`
//! - custom endpoint: `<endpoint-name>.cluster-custom-<hash>.<region>.rds.amazonaws.com` (its
//!   name is not the cluster's)
//! - shard group: `<shard-group-id>.shardgrp-<hash>.<region>.rds.amazonaws.com`
//! - RDS Proxy: `<proxy-name>.proxy-<hash>.<region>.rds.amazonaws.com`
//!
//! China's regions end in `.rds.amazonaws.com.cn`. A trailing dot (a fully qualified name) and
//! upper case are accepted; identifiers are lower case in RDS's names.

/// The resource an endpoint names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resource {
    Instance {
        id: String,
        region: String,
    },
    /// The cluster endpoint (`readers: false`) or its reader endpoint (`true`).
    Cluster {
        id: String,
        region: String,
        readers: bool,
    },
    ShardGroup {
        id: String,
        region: String,
    },
    /// An RDS name that CloudWatch has no dimension for: a custom endpoint's or a proxy's.
    Unresolvable {
        what: &'static str,
        name: String,
    },
}

/// The resource behind `host`, or `None` when it is no RDS host name.
pub(crate) fn parse(host: &str) -> Option<Resource> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let stem = host
        .strip_suffix(".rds.amazonaws.com")
        .or_else(|| host.strip_suffix(".rds.amazonaws.com.cn"))?;
    // `<first>.<kind-hash>.<region>`: exactly three labels before the suffix.
    let labels: Vec<&str> = stem.split('.').collect();
    let [first, kind, region] = labels[..] else {
        return None;
    };
    if first.is_empty() || kind.is_empty() || !is_region(region) {
        return None;
    }
    let (id, region) = (first.to_string(), region.to_string());
    // The longest prefixes first: `cluster-ro-` and `cluster-custom-` before `cluster-`.
    Some(if kind.starts_with("cluster-ro-") {
        Resource::Cluster {
            id,
            region,
            readers: true,
        }
    } else if kind.starts_with("cluster-custom-") {
        Resource::Unresolvable {
            what: "a custom cluster endpoint",
            name: id,
        }
    } else if kind.starts_with("cluster-") {
        Resource::Cluster {
            id,
            region,
            readers: false,
        }
    } else if kind.starts_with("shardgrp-") {
        Resource::ShardGroup { id, region }
    } else if kind.starts_with("proxy-") {
        Resource::Unresolvable {
            what: "an RDS Proxy endpoint",
            name: id,
        }
    } else if kind.chars().all(|c| c.is_ascii_alphanumeric()) {
        Resource::Instance { id, region }
    } else {
        return None;
    })
}

/// `us-east-1`, `eu-central-2`, `us-gov-west-1`, `cn-north-1`: letters and digits in at least
/// three dash-separated parts, the last a number.
fn is_region(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() >= 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && parts.last().is_some_and(|p| p.parse::<u32>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> String {
        x.to_string()
    }

    #[test]
    fn rds_names_give_their_resource_and_region() {
        assert_eq!(
            parse("mydb.c9akciq32.us-east-1.rds.amazonaws.com"),
            Some(Resource::Instance {
                id: s("mydb"),
                region: s("us-east-1")
            })
        );
        assert_eq!(
            parse("Aurora-1.cluster-c9akciq32.eu-west-2.rds.amazonaws.com."),
            Some(Resource::Cluster {
                id: s("aurora-1"),
                region: s("eu-west-2"),
                readers: false
            })
        );
        assert_eq!(
            parse("aurora-1.cluster-ro-c9akciq32.eu-west-2.rds.amazonaws.com"),
            Some(Resource::Cluster {
                id: s("aurora-1"),
                region: s("eu-west-2"),
                readers: true
            })
        );
        assert_eq!(
            parse("lim-sg.shardgrp-c9akciq32.us-east-2.rds.amazonaws.com"),
            Some(Resource::ShardGroup {
                id: s("lim-sg"),
                region: s("us-east-2")
            })
        );
        assert_eq!(
            parse("db.c9akciq32.cn-north-1.rds.amazonaws.com.cn"),
            Some(Resource::Instance {
                id: s("db"),
                region: s("cn-north-1")
            })
        );
        assert_eq!(
            parse("db.c9akciq32.us-gov-west-1.rds.amazonaws.com"),
            Some(Resource::Instance {
                id: s("db"),
                region: s("us-gov-west-1")
            })
        );
    }

    #[test]
    fn custom_and_proxy_endpoints_name_no_cluster() {
        assert_eq!(
            parse("reporting.cluster-custom-c9akciq32.us-east-1.rds.amazonaws.com"),
            Some(Resource::Unresolvable {
                what: "a custom cluster endpoint",
                name: s("reporting")
            })
        );
        assert!(matches!(
            parse("px.proxy-c9akciq32.us-east-1.rds.amazonaws.com"),
            Some(Resource::Unresolvable { .. })
        ));
    }

    #[test]
    fn other_hosts_are_no_rds_names() {
        for h in [
            "127.0.0.1",
            "localhost",
            "/tmp",
            "::1",
            "db.example.com",
            "rds.amazonaws.com",
            "mydb.us-east-1.rds.amazonaws.com",
            "a.b.c.us-east-1.rds.amazonaws.com",
            "mydb.c9akciq32.useast1.rds.amazonaws.com",
            "mydb.c9akciq32.us-east-1.rds.amazonaws.com.evil.example",
            ".c9akciq32.us-east-1.rds.amazonaws.com",
        ] {
            assert_eq!(parse(h), None, "{h}");
        }
    }
}
