//! The plain log format's fields: `name=value`, the message bare.
//!
//! They read as tracing-subscriber's default writes them without colour,
//! less the `otel.*` fields, which name a span for the trace exporter and
//! only cluttered every line. The default visitor styles each name and `=`
//! even with colour off: on the access line and the call's span that was
//! about a fortieth of a call's instructions.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::format::Writer;

/// The field formatter of the plain format.
pub(super) struct PlainFields;

impl<'a> MakeVisitor<Writer<'a>> for PlainFields {
    type Visitor = Plain<'a>;

    fn make_visitor(&self, writer: Writer<'a>) -> Plain<'a> {
        Plain {
            writer,
            first: true,
            result: Ok(()),
        }
    }
}

/// Writes one event's or span's fields.
pub(super) struct Plain<'a> {
    writer: Writer<'a>,
    first: bool,
    result: fmt::Result,
}

impl Plain<'_> {
    fn write(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        let name = field.name();
        // `log.*`: where a `log` record came from, which the format prints itself.
        if self.result.is_err() || name.starts_with("otel.") || name.starts_with("log.") {
            return;
        }
        let gap = if std::mem::take(&mut self.first) { "" } else { " " };
        self.result = match name {
            "message" => write!(self.writer, "{gap}{value}"),
            name => write!(self.writer, "{gap}{}={value}", name.strip_prefix("r#").unwrap_or(name)),
        };
    }
}

impl Visit for Plain<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.write(field, format_args!("{value}"));
        } else {
            self.write(field, format_args!("{value:?}"));
        }
    }

    /// The error and its sources, `: ` apart.
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.write(field, format_args!("{}", vocab::text::with_sources(value)));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.write(field, format_args!("{value:?}"));
    }
}

impl VisitOutput<fmt::Result> for Plain<'_> {
    fn finish(self) -> fmt::Result {
        self.result
    }
}

impl VisitFmt for Plain<'_> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        &mut self.writer
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    /// What the plain format writes for `f`'s events.
    fn logged(f: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Sink(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Sink {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let out = sink.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .fmt_fields(PlainFields)
            .with_writer(move || out.clone());
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), f);
        String::from_utf8(sink.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn fields_read_as_the_default_format_writes_them_less_otel() {
        let line = logged(|| {
            let span = tracing::info_span!("call", otel.name = "tool_execute", request_id = %"r-1", project = tracing::field::Empty);
            span.record("project", 7);
            let _in = span.enter();
            tracing::warn!(server = %"demo", tool = "echo", calls = 3, "downstream {} failed", "demo");
        });
        assert_eq!(
            line.trim(),
            r#"WARN call{request_id=r-1 project=7}: downstream demo failed server=demo tool="echo" calls=3"#
        );
    }

    #[test]
    fn an_error_is_written_with_its_sources() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot reach the server")]
        struct Outer(#[source] std::io::Error);
        let error = Outer(std::io::Error::other("connection refused"));
        let line = logged(|| tracing::error!(error = &error as &dyn std::error::Error, "failed"));
        assert_eq!(
            line.trim(),
            "ERROR failed error=cannot reach the server: connection refused"
        );
    }
}
