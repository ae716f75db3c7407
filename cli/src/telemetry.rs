//! The CLI's exporters for `proxy` and `watch` (the library installs none): Prometheus text at
//! `--metrics ADDR` `/metrics`, and OTLP over HTTP when the standard `OTEL_EXPORTER_OTLP_*`
//! variables name an endpoint. W3C trace context and baggage are the propagators.
//!
//! # Invariants
//!
//! 1. `/metrics` listens on loopback unless `--metrics-any-address` says otherwise: it shows
//!    server names, error rates and outages to whoever can reach it.
//! 2. Exporting never holds up the command: providers are shut down (last export included)
//!    within [`FLUSH_LIMIT`] after it ends.

use std::{future::Future, net::SocketAddr, process::ExitCode, time::Duration};

use opentelemetry::{global, propagation::TextMapCompositePropagator};
use opentelemetry_sdk::{
    Resource,
    metrics::{PeriodicReader, SdkMeterProvider},
    propagation::{BaggagePropagator, TraceContextPropagator},
    trace::SdkTracerProvider,
};
use tokio_util::sync::CancellationToken;

use crate::{exit, safe};

/// How long the last export may take once the command has ended.
const FLUSH_LIMIT: Duration = Duration::from_secs(5);

/// `--metrics` and its guard.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TelemetryArgs {
    /// Serve Prometheus metrics at http://ADDR/metrics (`127.0.0.1:9464`, or a port alone for
    /// loopback). OTLP export is turned on by OTEL_EXPORTER_OTLP_ENDPOINT (or the _TRACES_ /
    /// _METRICS_ variants).
    #[arg(long, value_name = "ADDR", value_parser = metrics_address)]
    metrics: Option<SocketAddr>,
    /// Allow --metrics on an address other than loopback. /metrics names your servers and shows
    /// their failures to anyone who can reach it, without authentication.
    #[arg(long, requires = "metrics")]
    metrics_any_address: bool,
}

fn metrics_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("not an address (127.0.0.1:9464) or a port: {text}"))
}

/// Runs `work` with the exporters that `args` and the environment ask for.
pub(crate) async fn around(args: &TelemetryArgs, work: impl Future<Output = ExitCode>) -> ExitCode {
    let exporters = match Exporters::install(args).await {
        Ok(exporters) => exporters,
        Err(e) => {
            safe::eprint("mcp-resilient", e);
            return ExitCode::from(exit::USAGE);
        }
    };
    let code = work.await;
    exporters.shutdown().await;
    code
}

/// What was installed, to be shut down at the end.
struct Exporters {
    meters: Option<SdkMeterProvider>,
    tracer: Option<SdkTracerProvider>,
    serving: Option<(CancellationToken, tokio::task::JoinHandle<()>)>,
}

impl Exporters {
    async fn install(args: &TelemetryArgs) -> Result<Exporters, String> {
        global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]));
        let resource = resource();
        let mut serving = None;
        let mut meters = SdkMeterProvider::builder().with_resource(resource.clone());
        let mut any_reader = false;
        if let Some(addr) = args.metrics {
            if !addr.ip().is_loopback() && !args.metrics_any_address {
                return Err(format!(
                    "--metrics {addr} is not a loopback address: /metrics shows your servers and \
                     their failures to anyone who can reach it; add --metrics-any-address to \
                     serve it there anyway"
                ));
            }
            let registry = prometheus::Registry::new();
            let exporter = opentelemetry_prometheus::exporter()
                .with_registry(registry.clone())
                .scope_info_enabled(false)
                .build()
                .map_err(|e| format!("the Prometheus exporter: {e}"))?;
            meters = meters.with_reader(exporter);
            any_reader = true;
            serving = Some(serve(addr, registry).await?);
        }
        if let Some(exporter) = otlp("METRICS", || {
            opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .build()
        })? {
            meters = meters.with_reader(PeriodicReader::builder(exporter).build());
            any_reader = true;
        }
        let meters = any_reader.then(|| meters.build());
        let tracer = otlp("TRACES", || {
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .build()
        })?
        .map(|exporter| {
            SdkTracerProvider::builder()
                .with_resource(resource)
                .with_batch_exporter(exporter)
                .build()
        });
        let mut telemetry = mcp_resilient::telemetry::Telemetry::new();
        if let Some(meters) = &meters {
            global::set_meter_provider(meters.clone());
            telemetry = telemetry.meter_provider(meters);
        }
        if let Some(tracer) = &tracer {
            global::set_tracer_provider(tracer.clone());
            telemetry = telemetry.tracer_provider(tracer);
        }
        // The first and only install of this process: nothing has started yet.
        let _ = telemetry.install();
        Ok(Exporters {
            meters,
            tracer,
            serving,
        })
    }

    async fn shutdown(self) {
        if let Some((stop, task)) = self.serving {
            stop.cancel();
            let _ = tokio::time::timeout(FLUSH_LIMIT, task).await;
        }
        // The SDK's shutdowns block (a last export over HTTP): off the runtime, bounded.
        let (meters, tracer) = (self.meters, self.tracer);
        let flush = tokio::task::spawn_blocking(move || {
            if let Some(tracer) = tracer {
                let _ = tracer.shutdown();
            }
            if let Some(meters) = meters {
                let _ = meters.shutdown();
            }
        });
        let _ = tokio::time::timeout(FLUSH_LIMIT, flush).await;
    }
}

/// `service.name` is `mcp-resilient` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`)
/// names another.
fn resource() -> Resource {
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|a| a.contains("service.name="));
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name("mcp-resilient").build()
    }
}

/// The OTLP exporter of `signal` (`TRACES`, `METRICS`) when the environment turns it on: an
/// endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_<signal>_ENDPOINT`) and
/// `OTEL_<signal>_EXPORTER` is not `none`. Only `http/protobuf` is built in.
fn otlp<T, E: std::fmt::Display>(
    signal: &str,
    build: impl FnOnce() -> Result<T, E>,
) -> Result<Option<T>, String> {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let endpoint =
        set("OTEL_EXPORTER_OTLP_ENDPOINT") || set(&format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT"));
    let off = std::env::var(format!("OTEL_{signal}_EXPORTER")).is_ok_and(|v| v.trim() == "none")
        || std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if !endpoint || off {
        return Ok(None);
    }
    for name in [
        format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL"),
        "OTEL_EXPORTER_OTLP_PROTOCOL".to_owned(),
    ] {
        if let Ok(protocol) = std::env::var(&name)
            && protocol.trim() != "http/protobuf"
        {
            return Err(format!(
                "{name}={protocol}: only http/protobuf is built in (the OTLP default)"
            ));
        }
    }
    build()
        .map(Some)
        .map_err(|e| format!("the OTLP {} exporter: {e}", signal.to_lowercase()))
}

/// Serves `registry` as Prometheus text at `http://addr/metrics` until cancelled.
async fn serve(
    addr: SocketAddr,
    registry: prometheus::Registry,
) -> Result<(CancellationToken, tokio::task::JoinHandle<()>), String> {
    use axum::{Router, http::header, routing::get};
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("--metrics {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("--metrics {addr}: {e}"))?;
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let registry = registry.clone();
            async move {
                let text = prometheus::TextEncoder::new()
                    .encode_to_string(&registry.gather())
                    .unwrap_or_default();
                ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text)
            }
        }),
    );
    let stop = CancellationToken::new();
    let until = stop.clone();
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { until.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!("the metrics endpoint stopped: {e}");
        }
    });
    safe::eprint(
        "mcp-resilient",
        format!("metrics at http://{bound}/metrics"),
    );
    Ok((stop, task))
}
