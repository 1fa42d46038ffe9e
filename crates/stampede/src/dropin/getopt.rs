//! GNU `getopt_long` as glibc behaves (the parser every Linux pgbench gets): the order in which
//! options are seen, their arguments, where the non-option arguments end up, and glibc's own
//! messages for a bad option. A drop-in command line must fail on the same argument with the same
//! words, and a dropped-in DBNAME may stand anywhere, so clap (which has its own rules and
//! messages) cannot stand in for it.
//!
//! What is reproduced (glibc 2.36, `posix/getopt.c`, `_getopt_internal_r` and
//! `process_long_option`):
//! - short options bundle (`-nS`), take their argument from the rest of the word (`-c8`) or from the
//!   next word (`-c 8`, even when it starts with `-`);
//! - `--name=value` and `--name value`; any unambiguous prefix of a long name (`--cli 8`); an exact
//!   name wins over longer names it is a prefix of; a prefix of several names is ambiguous;
//! - `--` ends the options; `-` alone is not an option;
//! - non-options are skipped and handed back in their order after the options (glibc's permutation),
//!   unless `POSIXLY_CORRECT` is set, where the first non-option ends the options;
//! - the messages, with `argv[0]` as given: `invalid option -- 'x'`, `option requires an argument --
//!   'c'`, `unrecognized option '--bad=1'`, `option '--connect' doesn't allow an argument`,
//!   `option '--client' requires an argument`, `option '--p' is ambiguous; possibilities: '--port'
//!   ...` (the possibilities in table order).
//!
//! Not reproduced (no pgbench option needs them): optional arguments (`::`), `-W`, a leading `+`,
//! `-` or `:` in the option string, `getopt_long_only`.

/// Whether a long option takes an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HasArg {
    No,
    Required,
}

/// One entry of a `struct option` table: the long name, whether it takes an argument, and the
/// identifier the option loop switches on (the short letter for options that have one).
#[derive(Clone, Copy, Debug)]
pub struct LongOpt<K: Copy> {
    pub name: &'static str,
    pub has_arg: HasArg,
    pub key: K,
}

/// A short option: its letter, whether it takes an argument, and its key.
#[derive(Clone, Copy, Debug)]
pub struct ShortOpt<K: Copy> {
    pub letter: char,
    pub has_arg: HasArg,
    pub key: K,
}

/// What the next call of [`Getopt::next`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found<'a, K> {
    /// An option, with its argument when it takes one.
    Opt(K, Option<&'a str>),
    /// glibc printed this line (already prefixed with `argv[0]`) and returned `'?'`.
    Error(String),
}

/// The scanning state of one `getopt_long` loop over `args` (`args[0]` is the program name).
pub struct Getopt<'a, K: Copy> {
    args: &'a [String],
    shorts: &'a [ShortOpt<K>],
    longs: &'a [LongOpt<K>],
    /// `POSIXLY_CORRECT`: stop at the first non-option.
    require_order: bool,
    /// Index of the word being scanned.
    optind: usize,
    /// Within a bundle of short options: the byte offset of the next letter in `args[optind]`.
    nextchar: Option<usize>,
    /// The non-options seen so far, in order.
    operands: Vec<&'a str>,
    done: bool,
}

impl<'a, K: Copy> Getopt<'a, K> {
    /// `posixly_correct`: whether the `POSIXLY_CORRECT` environment variable is set (any value).
    pub fn new(
        args: &'a [String],
        shorts: &'a [ShortOpt<K>],
        longs: &'a [LongOpt<K>],
        posixly_correct: bool,
    ) -> Getopt<'a, K> {
        Getopt {
            args,
            shorts,
            longs,
            require_order: posixly_correct,
            optind: 1,
            nextchar: None,
            operands: Vec::new(),
            done: false,
        }
    }

    fn argv0(&self) -> &str {
        self.args.first().map(String::as_str).unwrap_or("")
    }

    /// The next option, `None` once the options end (then see [`Getopt::operands`]).
    pub fn next(&mut self) -> Option<Found<'a, K>> {
        if self.done {
            return None;
        }
        let args = self.args;
        if self.nextchar.is_none() {
            // Skip (and set aside) non-options, unless the first one ends the options.
            while self.optind < args.len() && is_operand(&args[self.optind]) {
                if self.require_order {
                    return self.finish();
                }
                self.operands.push(&args[self.optind]);
                self.optind += 1;
            }
            if self.optind == args.len() {
                return self.finish();
            }
            let word = &args[self.optind];
            if word == "--" {
                self.optind += 1;
                return self.finish();
            }
            if word.starts_with("--") {
                return Some(self.long_option());
            }
            self.nextchar = Some(1);
        }
        Some(self.short_option())
    }

    /// The options ended: everything left is an operand, after the ones set aside.
    fn finish(&mut self) -> Option<Found<'a, K>> {
        self.done = true;
        self.operands
            .extend(self.args[self.optind..].iter().map(String::as_str));
        self.optind = self.args.len();
        None
    }

    fn short_option(&mut self) -> Found<'a, K> {
        let word: &'a str = &self.args[self.optind];
        let at = self.nextchar.unwrap();
        let c = word[at..].chars().next().unwrap();
        let rest = at + c.len_utf8();
        let bundle_ends = rest == word.len();
        if bundle_ends {
            self.optind += 1;
            self.nextchar = None;
        } else {
            self.nextchar = Some(rest);
        }
        let Some(opt) = self.shorts.iter().find(|o| o.letter == c) else {
            return Found::Error(format!("{}: invalid option -- '{c}'", self.argv0()));
        };
        if opt.has_arg == HasArg::No {
            return Found::Opt(opt.key, None);
        }
        if !bundle_ends {
            // The rest of the word is the argument.
            self.optind += 1;
            self.nextchar = None;
            return Found::Opt(opt.key, Some(&word[rest..]));
        }
        match self.args.get(self.optind) {
            Some(arg) => {
                self.optind += 1;
                Found::Opt(opt.key, Some(arg))
            }
            None => Found::Error(format!(
                "{}: option requires an argument -- '{c}'",
                self.argv0()
            )),
        }
    }

    fn long_option(&mut self) -> Found<'a, K> {
        let word: &'a str = &self.args[self.optind];
        let text = &word[2..];
        let (name, value) = match text.find('=') {
            Some(eq) => (&text[..eq], Some(&text[eq + 1..])),
            None => (text, None),
        };
        let longs = self.longs;
        let found = match longs.iter().position(|o| o.name == name) {
            Some(i) => i,
            None => {
                let matches: Vec<usize> = (0..longs.len())
                    .filter(|&i| longs[i].name.starts_with(name))
                    .collect();
                match matches.as_slice() {
                    [] => {
                        return Found::Error(format!(
                            "{}: unrecognized option '--{text}'",
                            self.argv0()
                        ))
                    }
                    [one] => *one,
                    _ => {
                        let list: String = matches
                            .iter()
                            .map(|&i| format!(" '--{}'", longs[i].name))
                            .collect();
                        return Found::Error(format!(
                            "{}: option '--{text}' is ambiguous; possibilities:{list}",
                            self.argv0()
                        ));
                    }
                }
            }
        };
        let opt = &longs[found];
        self.optind += 1;
        match (opt.has_arg, value) {
            (HasArg::No, None) => Found::Opt(opt.key, None),
            (HasArg::No, Some(_)) => Found::Error(format!(
                "{}: option '--{}' doesn't allow an argument",
                self.argv0(),
                opt.name
            )),
            (HasArg::Required, Some(v)) => Found::Opt(opt.key, Some(v)),
            (HasArg::Required, None) => match self.args.get(self.optind) {
                Some(arg) => {
                    self.optind += 1;
                    Found::Opt(opt.key, Some(arg))
                }
                None => Found::Error(format!(
                    "{}: option '--{}' requires an argument",
                    self.argv0(),
                    opt.name
                )),
            },
        }
    }

    /// The non-option arguments, in order (glibc moves them after the options). Complete once
    /// [`Getopt::next`] has returned `None`.
    pub fn operands(&self) -> &[&'a str] {
        &self.operands
    }
}

/// glibc's `NONOPTION_P`: a word that does not start with `-`, or is `-` alone.
fn is_operand(word: &str) -> bool {
    !word.starts_with('-') || word == "-"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum K {
        C,
        N,
        S,
        Client,
        Connect,
        Port,
        Progress,
    }

    const SHORTS: &[ShortOpt<K>] = &[
        ShortOpt {
            letter: 'c',
            has_arg: HasArg::Required,
            key: K::C,
        },
        ShortOpt {
            letter: 'n',
            has_arg: HasArg::No,
            key: K::N,
        },
        ShortOpt {
            letter: 'S',
            has_arg: HasArg::No,
            key: K::S,
        },
    ];
    const LONGS: &[LongOpt<K>] = &[
        LongOpt {
            name: "client",
            has_arg: HasArg::Required,
            key: K::Client,
        },
        LongOpt {
            name: "connect",
            has_arg: HasArg::No,
            key: K::Connect,
        },
        LongOpt {
            name: "port",
            has_arg: HasArg::Required,
            key: K::Port,
        },
        LongOpt {
            name: "progress",
            has_arg: HasArg::Required,
            key: K::Progress,
        },
    ];

    fn scan(words: &[&str], posix: bool) -> (Vec<Found<'static, K>>, Vec<String>) {
        let args: Vec<String> = std::iter::once("prog")
            .chain(words.iter().copied())
            .map(String::from)
            .collect();
        let args: &'static [String] = Box::leak(args.into_boxed_slice());
        let mut g = Getopt::new(args, SHORTS, LONGS, posix);
        let mut found = Vec::new();
        while let Some(f) = g.next() {
            let stop = matches!(f, Found::Error(_));
            found.push(f);
            if stop {
                break;
            }
        }
        let ops = g.operands().iter().map(|s| s.to_string()).collect();
        (found, ops)
    }

    #[test]
    fn short_options_bundle_and_take_arguments_both_ways() {
        let (f, ops) = scan(&["-nS", "-c8", "-c", "-5", "-nc", "3"], false);
        assert_eq!(
            f,
            vec![
                Found::Opt(K::N, None),
                Found::Opt(K::S, None),
                Found::Opt(K::C, Some("8")),
                Found::Opt(K::C, Some("-5")),
                Found::Opt(K::N, None),
                Found::Opt(K::C, Some("3")),
            ]
        );
        assert!(ops.is_empty());
    }

    #[test]
    fn long_options_prefixes_and_values() {
        let (f, _) = scan(&["--cli=4", "--cli", "5", "--conn", "--client="], false);
        assert_eq!(
            f,
            vec![
                Found::Opt(K::Client, Some("4")),
                Found::Opt(K::Client, Some("5")),
                Found::Opt(K::Connect, None),
                Found::Opt(K::Client, Some("")),
            ]
        );
    }

    #[test]
    fn non_options_are_permuted_after_the_options() {
        let (f, ops) = scan(&["db", "-n", "x", "--", "-S", "y"], false);
        assert_eq!(f, vec![Found::Opt(K::N, None)]);
        assert_eq!(ops, vec!["db", "x", "-S", "y"]);
        let (f, ops) = scan(&["-", "-n"], false);
        assert_eq!(f, vec![Found::Opt(K::N, None)]);
        assert_eq!(ops, vec!["-"]);
    }

    #[test]
    fn posixly_correct_stops_at_the_first_non_option() {
        let (f, ops) = scan(&["-n", "db", "-S"], true);
        assert_eq!(f, vec![Found::Opt(K::N, None)]);
        assert_eq!(ops, vec!["db", "-S"]);
    }

    #[test]
    fn glibc_messages() {
        let err = |words: &[&str]| match scan(words, false).0.pop() {
            Some(Found::Error(e)) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(err(&["-x"]), "prog: invalid option -- 'x'");
        assert_eq!(err(&["-nx"]), "prog: invalid option -- 'x'");
        assert_eq!(err(&["-c"]), "prog: option requires an argument -- 'c'");
        assert_eq!(err(&["--bad=1"]), "prog: unrecognized option '--bad=1'");
        assert_eq!(err(&["---client"]), "prog: unrecognized option '---client'");
        assert_eq!(
            err(&["--conn=1"]),
            "prog: option '--connect' doesn't allow an argument"
        );
        assert_eq!(
            err(&["--cli"]),
            "prog: option '--client' requires an argument"
        );
        assert_eq!(
            err(&["--p=1"]),
            "prog: option '--p=1' is ambiguous; possibilities: '--port' '--progress'"
        );
        assert_eq!(
            err(&["--c"]),
            "prog: option '--c' is ambiguous; possibilities: '--client' '--connect'"
        );
    }
}
