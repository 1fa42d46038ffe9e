//! YCSB's properties, as its users write them (`-p recordcount=100000`): the core workloads'
//! definitions (YCSB's `workloads/workloada` ... `workloadf` files) and the properties that
//! override them, read into [`Options`] before anything connects. An unknown property, or one of
//! YCSB's that stampede does not implement (`fieldlengthdistribution=zipfian`,
//! `requestdistribution=hotspot`, ...), is an error naming it.

use std::fmt;

/// How keys are numbered into names (`insertorder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertOrder {
    /// `user` + FNV-1a 64 of the key number (YCSB's default): inserts land all over the index.
    Hashed,
    /// `user` + the key number.
    Ordered,
}

impl InsertOrder {
    pub fn name(self) -> &'static str {
        match self {
            InsertOrder::Hashed => "hashed",
            InsertOrder::Ordered => "ordered",
        }
    }
}

/// `requestdistribution`: how reads, updates and scans choose their key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    Uniform,
    /// Scrambled zipfian (YCSB's "zipfian").
    Zipfian,
    /// Skewed towards the newest insert.
    Latest,
}

impl Distribution {
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Zipfian => "zipfian",
            Distribution::Latest => "latest",
        }
    }
}

/// YCSB's five operations, in the order of CoreWorkload's `createOperationGenerator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl Op {
    pub const ALL: [Op; 5] = [
        Op::Read,
        Op::Update,
        Op::Insert,
        Op::Scan,
        Op::ReadModifyWrite,
    ];

    /// The name YCSB's measurements use.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }

    /// The property giving its proportion.
    pub fn property(self) -> &'static str {
        match self {
            Op::Read => "readproportion",
            Op::Update => "updateproportion",
            Op::Insert => "insertproportion",
            Op::Scan => "scanproportion",
            Op::ReadModifyWrite => "readmodifywriteproportion",
        }
    }
}

/// Everything a YCSB run or load is told.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// The core workload's letter (`a` ... `f`), or None for `init ycsb`.
    pub workload: Option<char>,
    pub recordcount: u64,
    /// `operationcount`: only sizes the zipfian's room for new keys (CoreWorkload: 2 x
    /// operationcount x insertproportion); the run's length is -T or -t.
    pub operationcount: u64,
    pub fieldcount: u32,
    pub fieldlength: u32,
    pub insertorder: InsertOrder,
    pub distribution: Distribution,
    /// Proportions in [`Op::ALL`]'s order.
    pub proportions: [f64; 5],
    pub minscanlength: u64,
    pub maxscanlength: u64,
    /// `scanlengthdistribution`: uniform (false) or zipfian (true).
    pub scanlength_zipfian: bool,
    pub zipfianconstant: f64,
    pub readallfields: bool,
    pub writeallfields: bool,
    pub zeropadding: usize,
    /// Which properties the command line gave (so a run can tell a given value from a
    /// default when it meets the loaded table).
    pub given: Vec<String>,
}

impl Default for Options {
    /// CoreWorkload's defaults (and workloada's record and operation counts).
    fn default() -> Options {
        Options {
            workload: None,
            recordcount: 1000,
            operationcount: 1000,
            fieldcount: 10,
            fieldlength: 100,
            insertorder: InsertOrder::Hashed,
            distribution: Distribution::Uniform,
            proportions: [0.95, 0.05, 0.0, 0.0, 0.0],
            minscanlength: 1,
            maxscanlength: 1000,
            scanlength_zipfian: false,
            zipfianconstant: super::gen::ZIPFIAN_CONSTANT,
            readallfields: true,
            writeallfields: false,
            zeropadding: 1,
            given: Vec::new(),
        }
    }
}

/// An error in the properties, naming the one at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropError(pub String);

impl fmt::Display for PropError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PropError {}

/// The core workload `letter`'s file (YCSB's `workloads/workload<letter>`), over the defaults.
pub fn core_workload(letter: char) -> Option<Options> {
    let mut o = Options {
        workload: Some(letter),
        distribution: Distribution::Zipfian,
        ..Options::default()
    };
    o.proportions = match letter {
        'a' => [0.5, 0.5, 0.0, 0.0, 0.0],
        'b' => [0.95, 0.05, 0.0, 0.0, 0.0],
        'c' => [1.0, 0.0, 0.0, 0.0, 0.0],
        'd' => {
            o.distribution = Distribution::Latest;
            [0.95, 0.0, 0.05, 0.0, 0.0]
        }
        'e' => {
            o.maxscanlength = 100;
            [0.0, 0.0, 0.05, 0.95, 0.0]
        }
        'f' => [0.5, 0.0, 0.0, 0.0, 0.5],
        _ => return None,
    };
    Some(o)
}

/// The properties (`KEY=VALUE` each) applied over `base`, checked.
pub fn parse(mut base: Options, props: &[String]) -> Result<Options, PropError> {
    let bad = |k: &str, v: &str, what: &str| PropError(format!("-p {k}={v}: {what}"));
    for p in props {
        let Some((k, v)) = p.split_once('=') else {
            return Err(PropError(format!(
                "-p {p}: a property is KEY=VALUE (e.g. -p recordcount=100000)"
            )));
        };
        let (k, v) = (k.trim(), v.trim());
        let count = |min: u64| -> Result<u64, PropError> {
            match v.parse::<u64>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(bad(k, v, &format!("must be an integer, at least {min}"))),
            }
        };
        let boolean = || -> Result<bool, PropError> {
            match v {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad(k, v, "must be true or false")),
            }
        };
        match k {
            "recordcount" => base.recordcount = count(1)?,
            "operationcount" => base.operationcount = count(0)?,
            "fieldcount" => {
                base.fieldcount = u32::try_from(count(1)?)
                    .ok()
                    .filter(|n| *n <= 1000)
                    .ok_or_else(|| bad(k, v, "at most 1000 fields"))?
            }
            "fieldlength" => {
                base.fieldlength = u32::try_from(count(1)?)
                    .ok()
                    .filter(|n| *n <= 1 << 20)
                    .ok_or_else(|| bad(k, v, "at most 1048576 characters"))?
            }
            "insertorder" => {
                base.insertorder = match v {
                    "hashed" => InsertOrder::Hashed,
                    "ordered" => InsertOrder::Ordered,
                    _ => return Err(bad(k, v, "must be hashed or ordered")),
                }
            }
            "requestdistribution" => {
                base.distribution = match v {
                    "uniform" => Distribution::Uniform,
                    "zipfian" => Distribution::Zipfian,
                    "latest" => Distribution::Latest,
                    _ => {
                        return Err(bad(
                            k,
                            v,
                            "stampede implements uniform, zipfian and latest (not YCSB's \
                             exponential, sequential or hotspot)",
                        ))
                    }
                }
            }
            "minscanlength" => base.minscanlength = count(1)?,
            "maxscanlength" => base.maxscanlength = count(1)?,
            "scanlengthdistribution" => {
                base.scanlength_zipfian = match v {
                    "uniform" => false,
                    "zipfian" => true,
                    _ => return Err(bad(k, v, "must be uniform or zipfian")),
                }
            }
            "zipfianconstant" => match v.parse::<f64>() {
                Ok(c) if c > 0.0 && c < 1.0 => base.zipfianconstant = c,
                _ => {
                    return Err(bad(
                        k,
                        v,
                        "must be between 0 and 1, exclusive (YCSB's is 0.99)",
                    ))
                }
            },
            "readallfields" => base.readallfields = boolean()?,
            "writeallfields" => base.writeallfields = boolean()?,
            "zeropadding" => {
                base.zeropadding = usize::try_from(count(1)?)
                    .ok()
                    .filter(|n| *n <= 200)
                    .ok_or_else(|| bad(k, v, "at most 200 digits"))?
            }
            "fieldlengthdistribution" if v == "constant" => {}
            "table" if v == "usertable" => {}
            "workload" if v == "site.ycsb.workloads.CoreWorkload" => {}
            "fieldlengthdistribution" | "table" | "workload" => {
                return Err(bad(
                    k,
                    v,
                    "stampede implements only the default (constant, usertable, CoreWorkload)",
                ))
            }
            _ => match Op::ALL.iter().position(|o| o.property() == k) {
                Some(i) => match v.parse::<f64>() {
                    Ok(x) if (0.0..=1.0).contains(&x) => base.proportions[i] = x,
                    _ => return Err(bad(k, v, "must be a number between 0 and 1")),
                },
                None => {
                    return Err(PropError(format!(
                        "-p {k}: unknown property; stampede reads recordcount, operationcount, \
                         fieldcount, fieldlength, insertorder, requestdistribution, \
                         readproportion, updateproportion, insertproportion, scanproportion, \
                         readmodifywriteproportion, minscanlength, maxscanlength, \
                         scanlengthdistribution, zipfianconstant, readallfields, \
                         writeallfields, zeropadding"
                    )))
                }
            },
        }
        base.given.push(k.to_string());
    }
    if base.workload.is_some() && base.proportions.iter().all(|p| *p == 0.0) {
        return Err(PropError(
            "every operation's proportion is 0: give one a proportion above 0".into(),
        ));
    }
    if base.minscanlength > base.maxscanlength {
        return Err(PropError(format!(
            "-p minscanlength={} is above maxscanlength={}",
            base.minscanlength, base.maxscanlength
        )));
    }
    if base.distribution == Distribution::Latest && base.recordcount < 2 {
        return Err(PropError(
            "-p requestdistribution=latest needs a recordcount of at least 2".into(),
        ));
    }
    Ok(base)
}

impl Options {
    /// Whether property `k` was given on the command line.
    pub fn was_given(&self, k: &str) -> bool {
        self.given.iter().any(|g| g == k)
    }

    /// The operations with a proportion above 0, in [`Op::ALL`]'s order, with their
    /// proportions: the run's transaction types.
    pub fn ops(&self) -> Vec<(Op, f64)> {
        Op::ALL
            .iter()
            .zip(self.proportions)
            .filter(|(_, p)| *p > 0.0)
            .map(|(o, p)| (*o, p))
            .collect()
    }

    /// The mix in words: `50% READ, 50% UPDATE, zipfian`.
    pub fn describe(&self) -> String {
        let sum: f64 = self.proportions.iter().sum();
        let mix: Vec<String> = (self.ops().iter())
            .map(|(o, p)| format!("{}% {}", fmt_pct(100.0 * p / sum), o.name()))
            .collect();
        format!("{}, {}", mix.join(" / "), self.distribution.name())
    }
}

fn fmt_pct(x: f64) -> String {
    let r = (x * 100.0).round() / 100.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r}")
    }
}
