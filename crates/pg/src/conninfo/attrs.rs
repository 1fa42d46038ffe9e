//! libpq's choice among several hosts: `target_session_attrs` (PostgreSQL 14+'s values) and
//! `load_balance_hosts` (16+). PostgreSQL docs, "Connection Strings", target_session_attrs:
//! `read-write` "session must accept read-write transactions by default (that is, the server
//! must not be in hot standby mode and the default_transaction_read_only parameter must be
//! off)"; `read-only` the opposite; `primary` "the server must not be in hot standby mode";
//! `standby` "the server must be in hot standby mode"; `prefer-standby` "first try to find a
//! standby server, but if none of the listed hosts is a standby server, try again in any
//! mode". The refusal texts are libpq's (fe-connect.c), so a message reads as psql's would.

use crate::Error;

/// `target_session_attrs`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SessionAttrs {
    #[default]
    Any,
    ReadWrite,
    ReadOnly,
    Primary,
    Standby,
    PreferStandby,
}

impl SessionAttrs {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionAttrs::Any => "any",
            SessionAttrs::ReadWrite => "read-write",
            SessionAttrs::ReadOnly => "read-only",
            SessionAttrs::Primary => "primary",
            SessionAttrs::Standby => "standby",
            SessionAttrs::PreferStandby => "prefer-standby",
        }
    }

    /// The passes over the host list: `prefer-standby` is a `standby` pass, then an `any` pass.
    pub fn passes(self) -> &'static [SessionAttrs] {
        match self {
            SessionAttrs::Any => &[SessionAttrs::Any],
            SessionAttrs::ReadWrite => &[SessionAttrs::ReadWrite],
            SessionAttrs::ReadOnly => &[SessionAttrs::ReadOnly],
            SessionAttrs::Primary => &[SessionAttrs::Primary],
            SessionAttrs::Standby => &[SessionAttrs::Standby],
            SessionAttrs::PreferStandby => &[SessionAttrs::Standby, SessionAttrs::Any],
        }
    }

    /// Whether checking a session costs anything (`any` accepts every server).
    pub fn checks(self) -> bool {
        self != SessionAttrs::Any
    }

    /// Why a session on a server in this state is not acceptable (libpq's words), or `None`.
    pub fn refusal(self, hot_standby: bool, read_only: bool) -> Option<&'static str> {
        let session_read_only = hot_standby || read_only;
        match self {
            SessionAttrs::Any | SessionAttrs::PreferStandby => None,
            SessionAttrs::ReadWrite if session_read_only => Some("session is read-only"),
            SessionAttrs::ReadOnly if !session_read_only => Some("session is not read-only"),
            SessionAttrs::Primary if hot_standby => Some("server is in hot standby mode"),
            SessionAttrs::Standby if !hot_standby => Some("server is not in hot standby mode"),
            _ => None,
        }
    }

    /// Whether `why`, a [`SessionAttrs::refusal`], says the host takes no writes (a standby, or
    /// a read-only primary): for an operator, what 25006 says of a write.
    pub fn refused_writes(why: &str) -> bool {
        matches!(
            why,
            "session is read-only" | "server is in hot standby mode"
        )
    }
}

impl std::fmt::Display for SessionAttrs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SessionAttrs {
    type Err = Error;
    fn from_str(s: &str) -> Result<SessionAttrs, Error> {
        Ok(match s {
            "any" => SessionAttrs::Any,
            "read-write" => SessionAttrs::ReadWrite,
            "read-only" => SessionAttrs::ReadOnly,
            "primary" => SessionAttrs::Primary,
            "standby" => SessionAttrs::Standby,
            "prefer-standby" => SessionAttrs::PreferStandby,
            other => {
                return Err(Error::Config(format!(
                    "invalid target_session_attrs value: \"{other}\" (use any, read-write, \
                     read-only, primary, standby or prefer-standby)"
                )))
            }
        })
    }
}

/// `load_balance_hosts`: `disable` tries the hosts in the order given; `random` in a random
/// order, drawn anew for each connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadBalance {
    #[default]
    Disable,
    Random,
}

impl std::str::FromStr for LoadBalance {
    type Err = Error;
    fn from_str(s: &str) -> Result<LoadBalance, Error> {
        match s {
            "disable" => Ok(LoadBalance::Disable),
            "random" => Ok(LoadBalance::Random),
            other => Err(Error::Config(format!(
                "invalid load_balance_hosts value: \"{other}\" (use disable or random)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libpq's rules, state by state: (hot standby, default_transaction_read_only).
    #[test]
    fn refusals_follow_libpq() {
        use SessionAttrs::*;
        let primary = (false, false);
        let read_only_primary = (false, true);
        let standby = (true, false);
        let cases = [
            (ReadWrite, primary, None),
            (ReadWrite, read_only_primary, Some("session is read-only")),
            (ReadWrite, standby, Some("session is read-only")),
            (ReadOnly, primary, Some("session is not read-only")),
            (ReadOnly, read_only_primary, None),
            (ReadOnly, standby, None),
            (Primary, primary, None),
            (Primary, read_only_primary, None),
            (Primary, standby, Some("server is in hot standby mode")),
            (Standby, primary, Some("server is not in hot standby mode")),
            (
                Standby,
                read_only_primary,
                Some("server is not in hot standby mode"),
            ),
            (Standby, standby, None),
            (Any, standby, None),
        ];
        for (a, (hs, ro), want) in cases {
            assert_eq!(
                a.refusal(hs, ro),
                want,
                "{a} on hot_standby={hs} read_only={ro}"
            );
            // A writer was wanted and the host takes no writes: those refusals, no other.
            let no_writes = matches!(a, ReadWrite | Primary) && (hs || (ro && a == ReadWrite));
            assert_eq!(
                want.is_some_and(SessionAttrs::refused_writes),
                no_writes,
                "{a} on hot_standby={hs} read_only={ro}"
            );
        }
        assert_eq!(PreferStandby.passes(), &[Standby, Any]);
        assert_eq!(ReadWrite.passes(), &[ReadWrite]);
    }

    #[test]
    fn values_parse_as_libpq_spells_them() {
        for a in [
            "any",
            "read-write",
            "read-only",
            "primary",
            "standby",
            "prefer-standby",
        ] {
            assert_eq!(a.parse::<SessionAttrs>().unwrap().as_str(), a);
        }
        assert!("master".parse::<SessionAttrs>().is_err());
        assert_eq!(
            "random".parse::<LoadBalance>().unwrap(),
            LoadBalance::Random
        );
        assert!("yes".parse::<LoadBalance>().is_err());
    }
}
