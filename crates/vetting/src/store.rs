//! What pinning asks of the store, and nothing more: the pins and reviews
//! of every server, to pin, to hold, and a generation that moves on every
//! change. The store implements [`PinStore`] with its SQL (the store
//! crate's `pins.rs`); the operator's reads and decisions stay there.

use std::collections::HashMap;

/// What the store holds about one server's tools: pinned hashes and
/// rejected hashes, by tool name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerPins {
    /// Tool → hash of its pinned definition.
    pub pinned: HashMap<String, String>,
    /// Tool → (hash, state) of its definition under review.
    pub reviews: HashMap<String, (String, ReviewState)>,
}

/// A definition to trust.
#[derive(Debug, Clone, Copy)]
pub struct NewPin<'a> {
    /// The server.
    pub server: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The hash of `definition`.
    pub hash: &'a str,
    /// The canonical definition (JSON).
    pub definition: &'a str,
}

/// Where a definition under review stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewState {
    /// Hidden and refused until an operator decides.
    Held,
    /// An operator refused it; it stays hidden while the server lists it.
    Rejected,
}

impl ReviewState {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Held => "held",
            ReviewState::Rejected => "rejected",
        }
    }

    /// From its column value (anything but `rejected` is held).
    pub fn from_column(s: &str) -> Self {
        if s == "rejected" {
            ReviewState::Rejected
        } else {
            ReviewState::Held
        }
    }
}

/// The store, as pinning uses it: each call runs inline.
pub trait PinStore: Send + Sync + 'static {
    /// Why the store refused.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The review generation: moves on every change to pins and reviews
    /// (an operator's approval from another process, too).
    fn review_generation(&self) -> Result<i64, Self::Error>;

    /// Pins and reviews of every server, by server.
    fn pins(&self) -> Result<HashMap<String, ServerPins>, Self::Error>;

    /// Trusts each definition for its tool, replacing any pin and review,
    /// in one transaction (a server's first listing pins every tool at once).
    fn pin_tools(&self, pins: &[NewPin<'_>]) -> Result<(), Self::Error>;

    /// Holds `definition` of `server`'s `tool` for review, for `reasons`
    /// ([`crate::pins::Reason::word`]); true when this definition was not
    /// already waiting (a change to log and count).
    fn hold_tool(
        &self,
        server: &str,
        tool: &str,
        hash: &str,
        definition: &str,
        reasons: &[&str],
    ) -> Result<bool, Self::Error>;
}
