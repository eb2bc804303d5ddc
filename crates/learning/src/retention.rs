//! How much learning keeps, and for how long: defined once, for the memory
//! in this crate and the store's rows alike.

use std::time::Duration;

/// Remembered queries kept per tool (the memory of meanings, and the store's
/// rows of it): the newest this many.
pub const PER_TOOL: usize = 32;

/// Remembered queries kept per project: the newest this many. A discovery
/// scans them all (10,000 rows of 388 bytes: under a millisecond).
pub const TOTAL: usize = 10_000;

/// How long after a discovery an execute in the same session still counts
/// as following it (the links learning keeps, in memory and in the store).
pub const LINK_WINDOW: Duration = Duration::from_secs(30 * 60);
