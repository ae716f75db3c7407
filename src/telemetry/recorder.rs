//! [`Telemetry`]: where the library records (the global providers, or supplied ones), and the
//! recorder built from it once per process (its instruments are `instruments`).

use std::sync::OnceLock;

use opentelemetry::{
    InstrumentationScope,
    global::{self, BoxedTracer, ObjectSafeTracerProvider},
    metrics::{Meter, MeterProvider},
};

use super::instruments::Instruments;

/// Where the library's metrics and spans go, for the whole process.
///
/// Without [`install`](Self::install), the library records into the global providers
/// (`opentelemetry::global::meter_provider()` and `tracer_provider()`) as they are when the first
/// supervisor starts: install yours (or call `install`) before that. The library never installs
/// an exporter or a propagator; W3C trace context goes into `params._meta` through the global
/// text map propagator (`opentelemetry::global::set_text_map_propagator`).
///
/// ```no_run
/// # fn demo(meters: &opentelemetry_sdk::metrics::SdkMeterProvider) {
/// use mcp_resilient::telemetry::Telemetry;
/// Telemetry::new().meter_provider(meters).tool_names(true).install().ok();
/// # }
/// ```
#[derive(Debug, Default)]
pub struct Telemetry {
    meter: Option<Meter>,
    tracer: Option<BoxedTracer>,
    tool_names: bool,
}

impl Telemetry {
    /// The global providers, without tool names.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records metrics through `provider` instead of the global one.
    pub fn meter_provider(mut self, provider: &impl MeterProvider) -> Self {
        self.meter = Some(provider.meter_with_scope(scope()));
        self
    }

    /// Records spans through `provider` instead of the global one.
    pub fn tracer_provider(mut self, provider: &impl ObjectSafeTracerProvider) -> Self {
        self.tracer = Some(BoxedTracer::new(provider.boxed_tracer(scope())));
        self
    }

    /// Adds `gen_ai.tool.name` to `tools/call` metrics and spans (and the tool to the span name).
    ///
    /// # Default
    /// Off: a server chooses its tool names, so each new one would be a new time series.
    pub fn tool_names(mut self, on: bool) -> Self {
        self.tool_names = on;
        self
    }

    /// Makes these the process's telemetry settings. Once only, and before the first supervisor
    /// starts: after that, the settings in use stay, and this returns `Err` with its argument.
    pub fn install(self) -> Result<(), Telemetry> {
        let mut offered = Some(self);
        RECORDER.get_or_init(|| offered.take().unwrap_or_default().build());
        match offered {
            None => Ok(()),
            Some(refused) => Err(refused),
        }
    }

    fn build(self) -> Recorder {
        let meter = self
            .meter
            .unwrap_or_else(|| global::meter_with_scope(scope()));
        Recorder {
            instruments: Instruments::new(&meter),
            meter,
            tracer: self
                .tracer
                .unwrap_or_else(|| global::tracer_with_scope(scope())),
            tool_names: self.tool_names,
        }
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("mcp-resilient")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// The process's recorder: the installed settings, or the global providers.
pub(super) fn recorder() -> &'static Recorder {
    RECORDER.get_or_init(|| Telemetry::new().build())
}

/// The meter the library records into (the one [`Telemetry::install`] set, else the global
/// provider's, as it was when first asked), for a program built on the library that records its
/// own instruments beside the library's: a gateway's server side, say. Asking for it settles the
/// settings, as the first supervisor's start does.
pub fn meter() -> &'static Meter {
    &recorder().meter
}

/// The tracer the library records into (see [`meter`]): a program's own spans made with it sit
/// in the same scope as the library's client spans, and a call made inside one of them (with
/// `opentelemetry::context::FutureExt::with_context`) gets it as the client span's parent.
pub fn tracer() -> &'static BoxedTracer {
    &recorder().tracer
}

/// Whether the settings in use put tool names on metrics and spans
/// ([`Telemetry::tool_names`]).
pub fn tool_names() -> bool {
    recorder().tool_names
}

/// The instruments and the tracer in use.
#[derive(Debug)]
pub(super) struct Recorder {
    pub(super) instruments: Instruments,
    /// For instruments made by a program built on the library ([`meter`]).
    pub(super) meter: Meter,
    pub(super) tracer: BoxedTracer,
    pub(super) tool_names: bool,
}
