//! Backslash commands (pgbench's `process_backslash_command`): the word splitter of exprscan.l's
//! INITIAL state, and each meta-command's arguments and checks, with pgbench's messages and
//! error positions. `\set`, `\if` and `\elif` hand their expression to `expr`.

use super::error::message;
use super::{CommandKind, ParseError, Parser, ShellArg, SleepArg, MAX_ARGS};
use crate::script::expr::{continuation_len, is_space, parse_expr, ExprError};
use crate::script::vars::valid_variable_name;

/// A word of a meta-command (exprscan.l, INITIAL state).
struct Word {
    start: usize,
    text: String,
}

/// exprscan.l's INITIAL state: the next white-space separated word, `None` at the end of the
/// command (a newline, consumed, or the end of the text). `pos` moves past what was read.
fn next_word(text: &str, pos: &mut usize) -> Option<Word> {
    let b = text.as_bytes();
    loop {
        let &c = b.get(*pos)?;
        if is_space(c) {
            *pos += 1;
            continue;
        }
        let cont = continuation_len(b, *pos);
        if cont > 0 {
            *pos += cont;
            continue;
        }
        if c == b'\n' {
            *pos += 1;
            return None;
        }
        break;
    }
    let start = *pos;
    let mut e = start;
    while e < b.len() && !is_space(b[e]) && b[e] != b'\n' {
        e += 1;
    }
    // `{nonspace}+{continuation}`: a word right before a line continuation does not include its
    // backslash.
    let mut next = e;
    if e > start + 1 && b[e - 1] == b'\\' {
        let cont = continuation_len(b, e - 1);
        if cont > 0 {
            e -= 1;
            next = e + cont;
        }
    }
    *pos = next;
    Some(Word {
        start,
        text: text[start..e].to_string(),
    })
}

/// What a backslash command turned into.
pub(super) enum Meta {
    Command(CommandKind),
    Gset(String),
    Aset(String),
}

/// C's `atoi` (leading white space, sign, digits; saturating instead of undefined on overflow).
pub(crate) fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
    let (neg, d) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for c in d.bytes().take_while(|c| c.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
    }
    if neg {
        -v
    } else {
        v
    }
}

impl Parser<'_, '_> {
    fn expr_error(&self, e: ExprError, command: &str) -> ParseError {
        self.error(e.at, message(&e.message, e.more.as_deref(), Some(command)))
    }

    /// The command's text from its backslash to `end`, without trailing line breaks.
    fn first_line(&self, start: usize, end: usize) -> String {
        self.text[start..end]
            .trim_end_matches(['\n', '\r'])
            .to_string()
    }

    /// Parse the meta-command whose backslash is at `bs`. Returns it (or `None` for a lone
    /// backslash), its first line, and the position after it.
    pub(super) fn backslash(
        &mut self,
        bs: usize,
    ) -> Result<(Option<(Meta, String)>, usize), ParseError> {
        let mut pos = bs + 1;
        let Some(cmd) = next_word(self.text, &mut pos) else {
            return Ok((None, pos));
        };
        let name = cmd.text.to_ascii_lowercase();
        let cmd_text = cmd.text.clone();
        let err = |p: &Self, at: usize, msg: &str, more: Option<&str>| {
            p.error(at, message(msg, more, Some(&cmd_text)))
        };
        let cmd_end = cmd.start + cmd.text.len();

        if matches!(name.as_str(), "set" | "if" | "elif") {
            let mut var = None;
            let mut valid_name = true;
            if name == "set" {
                let Some(w) = next_word(self.text, &mut pos) else {
                    return Err(err(self, cmd_end, "missing argument", None));
                };
                // Checked when the command runs, as pgbench does (see `CommandKind::Set`).
                valid_name = valid_variable_name(&w.text);
                var = Some(self.symbols.intern(&w.text));
            }
            let (expr, end) = parse_expr(self.text, pos, self.symbols)
                .map_err(|e| self.expr_error(e, &cmd_text))?;
            let first_line = self.first_line(bs, end);
            let kind = match name.as_str() {
                "set" => CommandKind::Set {
                    var: var.unwrap(),
                    expr,
                    valid_name,
                },
                "if" => CommandKind::If {
                    cond: expr,
                    on_false: usize::MAX,
                },
                _ => CommandKind::Elif {
                    cond: expr,
                    on_false: usize::MAX,
                    end: usize::MAX,
                },
            };
            return Ok((Some((Meta::Command(kind), first_line)), end));
        }

        // Every other command: collect the remaining words.
        let mut words = vec![cmd];
        while let Some(w) = next_word(self.text, &mut pos) {
            if words.len() >= MAX_ARGS {
                return Err(err(self, w.start, "too many arguments", None));
            }
            words.push(w);
        }
        let end = pos;
        let first_line = self.first_line(bs, end);
        let last_end = {
            let w = words.last().unwrap();
            w.start + w.text.len()
        };
        let argc = words.len();
        let kind = match name.as_str() {
            "sleep" => {
                if argc < 2 {
                    return Err(err(self, last_end, "missing argument", None));
                }
                if argc > 3 {
                    return Err(err(self, words[3].start, "too many arguments", None));
                }
                let arg = words[1].text.clone();
                let mut unit: Option<(String, usize)> =
                    words.get(2).map(|w| (w.text.clone(), w.start));
                let amount = if let Some(v) = arg.strip_prefix(':') {
                    SleepArg::Var(self.symbols.intern(v))
                } else {
                    // "10ms": a number and a unit in one word.
                    let b = arg.as_bytes();
                    let mut i = 0;
                    if matches!(b.first(), Some(b'+' | b'-')) {
                        i = 1;
                    }
                    let have_digit = b.get(i).is_some_and(|c| c.is_ascii_digit());
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    if i < b.len() {
                        if argc == 2 && have_digit {
                            unit = Some((arg[i..].to_string(), words[1].start + i));
                        } else {
                            return Err(err(
                                self,
                                words[1].start,
                                "invalid sleep time, must be an integer",
                                Some(&arg),
                            ));
                        }
                    }
                    SleepArg::Const(atoi(&arg))
                };
                let unit_us = match &unit {
                    None => 1_000_000,
                    Some((u, at)) => {
                        if u.eq_ignore_ascii_case("us") {
                            1
                        } else if u.eq_ignore_ascii_case("ms") {
                            1_000
                        } else if u.eq_ignore_ascii_case("s") {
                            1_000_000
                        } else {
                            return Err(err(
                                self,
                                *at,
                                "unrecognized time unit, must be us, ms or s",
                                Some(u),
                            ));
                        }
                    }
                };
                Meta::Command(CommandKind::Sleep { amount, unit_us })
            }
            "setshell" | "shell" => {
                let min = if name == "setshell" { 3 } else { 2 };
                if argc < min {
                    let msg = if name == "setshell" {
                        "missing argument"
                    } else {
                        "missing command"
                    };
                    return Err(err(self, last_end, msg, None));
                }
                let first_arg = min - 1;
                let args = words[first_arg..]
                    .iter()
                    .map(|w| {
                        if let Some(lit) = w.text.strip_prefix("::") {
                            ShellArg::Lit(format!(":{lit}"))
                        } else if let Some(v) = w.text.strip_prefix(':') {
                            ShellArg::Var(self.symbols.intern(v))
                        } else {
                            ShellArg::Lit(w.text.clone())
                        }
                    })
                    .collect();
                if name == "setshell" {
                    // Checked when the command runs, as pgbench does (see `CommandKind::Set`).
                    let valid_name = valid_variable_name(&words[1].text);
                    let var = self.symbols.intern(&words[1].text);
                    Meta::Command(CommandKind::SetShell {
                        var,
                        args,
                        valid_name,
                    })
                } else {
                    Meta::Command(CommandKind::Shell { args })
                }
            }
            "else" | "endif" | "startpipeline" | "endpipeline" | "syncpipeline" => {
                if argc != 1 {
                    return Err(err(self, words[1].start, "unexpected argument", None));
                }
                Meta::Command(match name.as_str() {
                    "else" => CommandKind::Else { end: usize::MAX },
                    "endif" => CommandKind::Endif,
                    "startpipeline" => CommandKind::StartPipeline,
                    "endpipeline" => CommandKind::EndPipeline,
                    _ => CommandKind::SyncPipeline,
                })
            }
            "gset" | "aset" => {
                if argc > 2 {
                    return Err(err(self, words[2].start, "too many arguments", None));
                }
                let prefix = words.get(1).map(|w| w.text.clone()).unwrap_or_default();
                if name == "gset" {
                    Meta::Gset(prefix)
                } else {
                    Meta::Aset(prefix)
                }
            }
            _ => return Err(err(self, words[0].start, "invalid command", None)),
        };
        Ok((Some((kind, first_line)), end))
    }
}
