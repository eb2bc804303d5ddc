//! Checking tool arguments by hand where a schema cannot say everything
//! (cross-field rules, friendly messages), reporting every problem at once.

use serde_json::{Map, Value};

/// Collects every problem with one arguments object instead of stopping at the first.
pub struct Checker<'a> {
    args: &'a Map<String, Value>,
    problems: Vec<String>,
}

impl<'a> Checker<'a> {
    pub fn new(args: &'a Map<String, Value>) -> Self {
        Self {
            args,
            problems: Vec::new(),
        }
    }

    pub fn problem(&mut self, message: String) {
        self.problems.push(message);
    }

    pub fn present(&self, key: &str) -> Option<&'a Value> {
        self.args.get(key).filter(|v| !v.is_null())
    }

    pub fn integer(&mut self, key: &str, min: u64, max: Option<u64>) -> Option<u64> {
        let value = self.present(key)?;
        let range = match max {
            Some(max) => format!("an integer from {min} to {max}"),
            None => format!("an integer of at least {min}"),
        };
        match value.as_u64() {
            Some(n) if n >= min && max.is_none_or(|m| n <= m) => Some(n),
            _ => {
                self.problem(format!("{key}: expected {range}, got {value}"));
                None
            }
        }
    }

    pub fn boolean(&mut self, key: &str) -> Option<bool> {
        let value = self.present(key)?;
        let b = value.as_bool();
        if b.is_none() {
            self.problem(format!("{key}: expected true or false, got {value}"));
        }
        b
    }

    pub fn string(&mut self, key: &str) -> Option<String> {
        let value = self.present(key)?;
        let s = value.as_str().map(str::to_string);
        if s.is_none() {
            self.problem(format!("{key}: expected a string, got {value}"));
        }
        s
    }

    pub fn object(&mut self, key: &str) -> Option<&'a Map<String, Value>> {
        let value = self.present(key)?;
        let o = value.as_object();
        if o.is_none() {
            self.problem(format!("{key}: expected an object, got {value}"));
        }
        o
    }

    /// Runs `f` on a nested object, prefixing its problems with `key.`.
    pub fn nested<T>(&mut self, key: &str, f: impl FnOnce(&mut Checker<'a>) -> T) -> Option<T> {
        let inner = self.object(key)?;
        let mut checker = Checker::new(inner);
        let value = f(&mut checker);
        self.problems
            .extend(checker.problems.into_iter().map(|p| format!("{key}.{p}")));
        Some(value)
    }

    pub fn finish<T>(self, value: T) -> Result<T, Vec<String>> {
        if self.problems.is_empty() {
            Ok(value)
        } else {
            Err(self.problems)
        }
    }
}
