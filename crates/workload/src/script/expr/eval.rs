//! pgbench.c's evaluation: `evaluateExpr`, `evalLazyFunc` (AND, OR, CASE), `evalStandardFunc`
//! (every other function and operator), and the coercions between values with pgbench's
//! messages. The distributions and hashes themselves are in `functions`.

use crate::random::Rng;

use super::functions::{
    exponential_rand, gaussian_rand, hash_fnv1a, hash_murmur2, permute, zipfian_rand,
    MAX_ZIPFIAN_PARAM, MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM,
};
use super::{EvalError, Expr, Func};
use crate::script::vars::{format_g15, non_finite, Value, Vars};

/// pgbench's `MAX_FARGS`: a non-lazy function call evaluates at most this many arguments.
pub const MAX_FARGS: usize = 16;

/// What an expression is evaluated against.
pub struct EvalCtx<'a> {
    pub vars: &'a mut Vars,
    /// The client's stream for `random*()` (pgbench `cs_func_rs`).
    pub rng: &'a mut Rng,
    /// For `debug()`'s message: the script number and the command index (0-based).
    pub script: usize,
    pub command: usize,
}

fn coerce_bool(v: Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(b),
        other => Err(EvalError(format!(
            "cannot coerce {} to boolean",
            other.type_name()
        ))),
    }
}

/// `%f` for an error message (PostgreSQL's snprintf: `NaN`, `Infinity`).
fn c_f(d: f64) -> String {
    match non_finite(d) {
        Some(s) => s.into(),
        None => format!("{d:.6}"),
    }
}

/// pgbench's `coerceToInt`: doubles are rounded half to even (`rint`) and must fit.
fn coerce_int(v: Value) -> Result<i64, EvalError> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => {
            let r = d.round_ties_even();
            // FLOAT8_FITS_IN_INT64
            if r.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                Err(EvalError(format!("double to int overflow for {}", c_f(r))))
            } else {
                Ok(r as i64)
            }
        }
        other => Err(EvalError(format!(
            "cannot coerce {} to int",
            other.type_name()
        ))),
    }
}

fn coerce_double(v: Value) -> Result<f64, EvalError> {
    match v {
        Value::Double(d) => Ok(d),
        Value::Int(i) => Ok(i as f64),
        other => Err(EvalError(format!(
            "cannot coerce {} to double",
            other.type_name()
        ))),
    }
}

fn err<T>(msg: &str) -> Result<T, EvalError> {
    Err(EvalError(msg.to_string()))
}

/// Evaluate an expression (pgbench `evaluateExpr`).
pub fn eval(e: &Expr, cx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    match e {
        Expr::Const(v) => Ok(*v),
        Expr::Var(id) => cx.vars.value(*id).map_err(EvalError),
        Expr::Call(f, args) => match f {
            Func::And | Func::Or | Func::Case => eval_lazy(*f, args, cx),
            _ => eval_standard(*f, args, cx),
        },
    }
}

/// pgbench's `evalLazyFunc`: AND, OR (NULL-propagating from the left), CASE.
fn eval_lazy(f: Func, args: &[Expr], cx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    match f {
        Func::And | Func::Or => {
            let a1 = eval(&args[0], cx)?;
            if a1 == Value::Null {
                return Ok(Value::Null);
            }
            let b1 = coerce_bool(a1)?;
            if (f == Func::And) != b1 {
                // false AND x, true OR x
                return Ok(Value::Bool(b1));
            }
            let a2 = eval(&args[1], cx)?;
            if a2 == Value::Null {
                return Ok(Value::Null);
            }
            Ok(Value::Bool(coerce_bool(a2)?))
        }
        _ => {
            let mut i = 0;
            while i + 1 < args.len() {
                if eval(&args[i], cx)?.truth() {
                    return eval(&args[i + 1], cx);
                }
                i += 2;
            }
            eval(&args[args.len() - 1], cx)
        }
    }
}

/// pgbench's `evalStandardFunc`: every argument is evaluated (in order), then NULL propagates
/// (except through IS and debug), then the function runs.
fn eval_standard(f: Func, args: &[Expr], cx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    let mut v = [Value::Null; MAX_FARGS];
    let mut has_null = false;
    for (slot, a) in v.iter_mut().zip(args.iter()) {
        *slot = eval(a, cx)?;
        has_null |= *slot == Value::Null;
    }
    if args.len() > MAX_FARGS {
        return Err(EvalError(format!(
            "too many function arguments, maximum is {MAX_FARGS}"
        )));
    }
    let n = args.len();
    if has_null && f != Func::Is && f != Func::Debug {
        return Ok(Value::Null);
    }
    match f {
        Func::Add
        | Func::Sub
        | Func::Mul
        | Func::Div
        | Func::Mod
        | Func::Eq
        | Func::Ne
        | Func::Le
        | Func::Lt => {
            let (l, r) = (v[0], v[1]);
            let any_double = matches!(l, Value::Double(_)) || matches!(r, Value::Double(_));
            if any_double && f != Func::Mod {
                let (ld, rd) = (coerce_double(l)?, coerce_double(r)?);
                Ok(match f {
                    Func::Add => Value::Double(ld + rd),
                    Func::Sub => Value::Double(ld - rd),
                    Func::Mul => Value::Double(ld * rd),
                    Func::Div => Value::Double(ld / rd),
                    Func::Eq => Value::Bool(ld == rd),
                    Func::Ne => Value::Bool(ld != rd),
                    Func::Le => Value::Bool(ld <= rd),
                    _ => Value::Bool(ld < rd),
                })
            } else {
                let (li, ri) = (coerce_int(l)?, coerce_int(r)?);
                match f {
                    Func::Add => li
                        .checked_add(ri)
                        .map(Value::Int)
                        .ok_or_else(|| EvalError("bigint add out of range".into())),
                    Func::Sub => li
                        .checked_sub(ri)
                        .map(Value::Int)
                        .ok_or_else(|| EvalError("bigint sub out of range".into())),
                    Func::Mul => li
                        .checked_mul(ri)
                        .map(Value::Int)
                        .ok_or_else(|| EvalError("bigint mul out of range".into())),
                    Func::Eq => Ok(Value::Bool(li == ri)),
                    Func::Ne => Ok(Value::Bool(li != ri)),
                    Func::Le => Ok(Value::Bool(li <= ri)),
                    Func::Lt => Ok(Value::Bool(li < ri)),
                    _ => {
                        if ri == 0 {
                            return err("division by zero");
                        }
                        if ri == -1 {
                            // Special case of the -1 divisor (INT64_MIN / -1 overflows).
                            if f == Func::Div {
                                return li
                                    .checked_neg()
                                    .map(Value::Int)
                                    .ok_or_else(|| EvalError("bigint div out of range".into()));
                            }
                            return Ok(Value::Int(0));
                        }
                        // C truncating division and remainder, as Rust's.
                        Ok(Value::Int(if f == Func::Div { li / ri } else { li % ri }))
                    }
                }
            }
        }
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::LShift | Func::RShift => {
            let (li, ri) = (coerce_int(v[0])?, coerce_int(v[1])?);
            Ok(Value::Int(match f {
                Func::BitAnd => li & ri,
                Func::BitOr => li | ri,
                Func::BitXor => li ^ ri,
                // C shifts of int64 as x86-64 executes them: the count is taken modulo 64.
                Func::LShift => li.wrapping_shl(ri as u32),
                _ => li.wrapping_shr(ri as u32),
            }))
        }
        Func::Not => Ok(Value::Bool(!coerce_bool(v[0])?)),
        Func::Pi => Ok(Value::Double(std::f64::consts::PI)),
        Func::Abs => match v[0] {
            Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
            // pgbench asserts a double here (a boolean is undefined behaviour there): an error.
            other => Ok(Value::Double(coerce_double(other)?.abs())),
        },
        Func::Debug => {
            let a = v[0];
            let mut s = format!("debug(script={},command={}): ", cx.script, cx.command + 1);
            match a {
                Value::Null => s.push_str("null"),
                Value::Bool(b) => s.push_str(if b { "boolean true" } else { "boolean false" }),
                Value::Int(i) => s.push_str(&format!("int {i}")),
                Value::Double(d) => {
                    s.push_str("double ");
                    format_g15(d, &mut s);
                }
            }
            eprintln!("{s}");
            Ok(a)
        }
        Func::Double | Func::Sqrt | Func::Ln | Func::Exp => {
            let d = coerce_double(v[0])?;
            Ok(Value::Double(match f {
                Func::Sqrt => d.sqrt(),
                Func::Ln => d.ln(),
                Func::Exp => d.exp(),
                _ => d,
            }))
        }
        Func::Int => Ok(Value::Int(coerce_int(v[0])?)),
        Func::Least | Func::Greatest => {
            let least = f == Func::Least;
            if v[..n].iter().any(|x| matches!(x, Value::Double(_))) {
                let mut ext = coerce_double(v[0])?;
                for x in &v[1..n] {
                    let d = coerce_double(*x)?;
                    // C's Min/Max macros, NaN behaviour included.
                    ext = if least {
                        if ext < d {
                            ext
                        } else {
                            d
                        }
                    } else if ext > d {
                        ext
                    } else {
                        d
                    };
                }
                Ok(Value::Double(ext))
            } else {
                let mut ext = coerce_int(v[0])?;
                for x in &v[1..n] {
                    let i = coerce_int(*x)?;
                    ext = if least { ext.min(i) } else { ext.max(i) };
                }
                Ok(Value::Int(ext))
            }
        }
        Func::Random | Func::RandomGaussian | Func::RandomExponential | Func::RandomZipfian => {
            let (imin, imax) = (coerce_int(v[0])?, coerce_int(v[1])?);
            if imin > imax {
                return err("empty range given to random");
            }
            if imax
                .checked_sub(imin)
                .and_then(|d| d.checked_add(1))
                .is_none()
            {
                return err("random range is too large");
            }
            if f == Func::Random {
                return Ok(Value::Int(cx.rng.range(imin, imax)));
            }
            let param = coerce_double(v[2])?;
            match f {
                Func::RandomGaussian => {
                    if param < MIN_GAUSSIAN_PARAM {
                        return Err(EvalError(format!(
                            "gaussian parameter must be at least {} (not {})",
                            c_f(MIN_GAUSSIAN_PARAM),
                            c_f(param)
                        )));
                    }
                    Ok(Value::Int(gaussian_rand(cx.rng, imin, imax, param)))
                }
                Func::RandomZipfian => {
                    if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                        return Err(EvalError(format!(
                            "zipfian parameter must be in range [{MIN_ZIPFIAN_PARAM:.3}, \
                             {MAX_ZIPFIAN_PARAM:.0}] (not {})",
                            c_f(param)
                        )));
                    }
                    Ok(Value::Int(zipfian_rand(cx.rng, imin, imax, param)))
                }
                _ => {
                    if param <= 0.0 {
                        return Err(EvalError(format!(
                            "exponential parameter must be greater than zero (not {})",
                            c_f(param)
                        )));
                    }
                    Ok(Value::Int(exponential_rand(cx.rng, imin, imax, param)))
                }
            }
        }
        Func::Pow => Ok(Value::Double(
            coerce_double(v[0])?.powf(coerce_double(v[1])?),
        )),
        Func::Is => {
            // The right side is a NULL or boolean constant (grammar): same type and same value.
            Ok(Value::Bool(match (v[0], v[1]) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(a), Value::Bool(b)) => a == b,
                _ => false,
            }))
        }
        Func::HashMurmur2 | Func::HashFnv1a => {
            let (val, seed) = (coerce_int(v[0])?, coerce_int(v[1])?);
            Ok(Value::Int(if f == Func::HashMurmur2 {
                hash_murmur2(val, seed as u64)
            } else {
                hash_fnv1a(val, seed as u64)
            }))
        }
        Func::Permute => {
            let (val, size, seed) = (coerce_int(v[0])?, coerce_int(v[1])?, coerce_int(v[2])?);
            if size <= 0 {
                return err("permute size parameter must be greater than zero");
            }
            Ok(Value::Int(permute(val, size, seed)))
        }
        Func::And | Func::Or | Func::Case => unreachable!("lazy functions"),
    }
}
