//! Stock-Level, clause 2.8: how many of the items of the district's last 20 orders have little
//! stock left (read only).
//!
//! Input (2.8.1): the terminal's own warehouse and district (constant for the terminal,
//! 2.8.1.1), the threshold uniform [10 .. 20]. Step (2.8.2.2): the district's next order id,
//! then the distinct items of the lines of orders [next - 20, next) whose stock at the
//! warehouse is below the threshold, in one statement, in its own transaction (2.8.2.3 allows
//! the weakest isolation here).

use sut::{Error, Value};

use super::spec::Uniform;
use super::{step, Txn};

pub(super) async fn run(Txn { cl, s, cx, st, w }: Txn<'_, '_>) -> Result<(), Error> {
    let threshold = cx.rng.uniform(10, 20);
    let p = [Value::Int(w), Value::Int(cl.stock_d), Value::Int(threshold)];
    step(s, cx, 0, &st.stock_level, &p).await?;
    Ok(())
}
