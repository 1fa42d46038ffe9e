//! The runtime of the setup path: loading, the checks, the drop-ins' own steps. One thread is
//! enough there (each step waits on the server); the measured run uses the engine's own threads.

use anyhow::Result;

/// A current-thread runtime with I/O and timers.
pub fn setup() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}
