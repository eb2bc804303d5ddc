//! The little SQL the store's modules speak, whichever engine answers:
//! statements with `?N` placeholders, arguments and rows of plain values
//! ([`Value`]), run on a connection or inside a transaction ([`Sql`]). The
//! engines ([`super::sqlite`], [`super::postgres`]) turn it into their own.
//!
//! Both engines get the same column types from the migrations: integers
//! (booleans as 0/1) are 64-bit, text is text, blobs are bytes.

use super::Error;

/// One argument or column.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// SQL NULL.
    Null,
    /// Any integer; booleans as 0 and 1.
    Int(i64),
    /// A float.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// What can be passed as an argument.
pub(super) trait ToValue {
    /// The argument.
    fn to_value(&self) -> Value;
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(*self as i64)
            }
        }
    )*};
}
integers!(i64, i32, u32, u64, usize);

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value {
        Value::Blob(self.clone())
    }
}

/// The arguments of a statement: `args![a, b]`.
macro_rules! args {
    ($($x:expr),* $(,)?) => {
        &[$($crate::sql::ToValue::to_value(&$x)),*] as &[$crate::sql::Value]
    };
}
pub(crate) use args;

/// What a column can be read as.
pub(super) trait FromValue: Sized {
    /// The value as `Self`, if it is one.
    fn from_value(value: &Value) -> Option<Self>;
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }
}

impl FromValue for u32 {
    fn from_value(value: &Value) -> Option<Self> {
        i64::from_value(value).and_then(|n| n.try_into().ok())
    }
}

impl FromValue for bool {
    fn from_value(value: &Value) -> Option<Self> {
        i64::from_value(value).map(|n| n != 0)
    }
}

impl FromValue for f64 {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Real(x) => Some(*x),
            Value::Int(n) => Some(*n as f64),
            _ => None,
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Blob(b) => Some(b.clone()),
            _ => None,
        }
    }
}

/// One row of an answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row(pub(super) Vec<Value>);

impl Row {
    /// Column `i` as `T`.
    pub(super) fn get<T: FromValue>(&self, i: usize) -> Result<T, Error> {
        let value = self.0.get(i).unwrap_or(&Value::Null);
        T::from_value(value).ok_or_else(|| {
            Error::Column(format!(
                "column {i} holds {value:?}, not a {}",
                std::any::type_name::<T>()
            ))
        })
    }

    /// Column `i` as text, without a copy (empty for NULL).
    pub(super) fn text(&self, i: usize) -> &str {
        match self.0.get(i) {
            Some(Value::Text(s)) => s,
            _ => "",
        }
    }
}

/// A connection, or a transaction on one.
pub(super) trait Sql {
    /// Runs a query; every row of its answer.
    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>, Error>;
    /// Runs a statement; how many rows it changed.
    fn execute(&self, sql: &str, args: &[Value]) -> Result<usize, Error>;
    /// Whether each statement is a round trip to a server (PostgreSQL),
    /// rather than a call into the process (SQLite): what decides how many
    /// rows a statement should carry.
    fn round_trips(&self) -> bool;
}

impl dyn Sql + '_ {
    /// The first row of the answer, read by `f`, if there is one.
    pub(super) fn row<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        self.query(sql, args)?.first().map(f).transpose()
    }

    /// The first row of an answer that always has one (a count, a singleton).
    pub(super) fn one<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.row(sql, args, f)?.ok_or_else(|| {
            Error::Column(format!(
                "no row from: {}",
                sql.split_whitespace().collect::<Vec<_>>().join(" ")
            ))
        })
    }

    /// Every row of the answer, each read by `f`.
    pub(super) fn all<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnMut(&Row) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        self.query(sql, args)?.iter().map(f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_and_columns_convert_both_ways() {
        let name = String::from("alpha");
        let none: Option<&str> = None;
        let args = args![7i64, name, none, true, 0.5f64, b"k".as_slice(), Some(3u32)];
        assert_eq!(
            args,
            [
                Value::Int(7),
                Value::Text("alpha".into()),
                Value::Null,
                Value::Int(1),
                Value::Real(0.5),
                Value::Blob(b"k".to_vec()),
                Value::Int(3)
            ]
        );
        let row = Row(args.to_vec());
        assert_eq!(row.get::<i64>(0).unwrap(), 7);
        assert_eq!(row.get::<String>(1).unwrap(), "alpha");
        assert_eq!(row.get::<Option<String>>(2).unwrap(), None);
        assert!(row.get::<bool>(3).unwrap());
        assert_eq!(row.get::<Vec<u8>>(5).unwrap(), b"k");
        assert_eq!(row.text(1), "alpha");
        let wrong = row.get::<i64>(1).unwrap_err().to_string();
        assert!(wrong.contains("column 1") && wrong.contains("i64"), "{wrong}");
    }
}
