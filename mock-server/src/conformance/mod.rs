//! Conformance mode (`--conformance`): a server with exactly the tools, resources, prompts and
//! completions the official suite's server scenarios (`@modelcontextprotocol/conformance server
//! --url`, 0.1.16) ask for, and nothing of the mock's own. Over Streamable HTTP on 127.0.0.1
//! (sessions, the standalone GET stream, `Host` checked against loopback names) or on stdio, so
//! that `mcp-resilient serve` can be run in front of it either way (`scripts/conformance-server.sh`).
//!
//! The catalogue is in [`catalogue`], the tools in [`tools`]. `test_reconnection` answers after
//! a pause but does not close its stream mid-call (rmcp offers that only on the session
//! manager's handle, not to a handler).

// Logging and resource subscriptions are deprecated by SEP-2577; the 2025 scenarios test them.
#![allow(deprecated)]

mod asks;
mod catalogue;
mod tools;

use std::{net::SocketAddr, process::ExitCode, sync::Arc};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
        CompletionInfo, GetPromptRequestParams, GetPromptResponse, Implementation,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
        PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
        ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
        UnsubscribeRequestParams,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio_util::sync::CancellationToken;

use crate::binary::{print_listening, wait_for_signal};

/// Values offered for `test_prompt_with_arguments`' arguments, filtered by prefix.
const COMPLETIONS: [&str; 4] = ["paris", "park", "party", "hello"];

/// The conformance server's handler (one per session; it keeps nothing between requests).
#[derive(Debug, Clone, Default)]
pub(crate) struct Conformance;

impl ServerHandler for Conformance {
    /// The 2025 revisions only: suite 0.1.16 tests those, and a 2026-07-28 client (the
    /// gateway's upstream session, on its own) then falls back to `initialize`, where the
    /// client's capabilities (sampling, elicitation) are declared.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "mcp-mock-server-conformance",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        tools::call(request, context).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(catalogue::resources()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            catalogue::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        catalogue::read(&request.uri).map(Into::into)
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(catalogue::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        catalogue::prompt(&request.name, request.arguments.as_ref()).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let prefix = request.argument.value.as_str();
        let values: Vec<String> = COMPLETIONS
            .iter()
            .filter(|value| value.starts_with(prefix))
            .map(|value| (*value).to_owned())
            .collect();
        let info = CompletionInfo::new(values)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(CompleteResult::new(info))
    }

    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}

/// Serves the conformance mode on stdio until the session ends.
pub(crate) async fn run_stdio() -> ExitCode {
    let running = match Conformance.serve(rmcp::transport::stdio()).await {
        Ok(running) => running,
        Err(error) => {
            eprintln!("mcp-mock-server: conformance: {error}");
            return ExitCode::FAILURE;
        }
    };
    let _ = running.waiting().await;
    ExitCode::SUCCESS
}

/// Serves the conformance mode at `http://127.0.0.1:<port>/mcp` until SIGINT or SIGTERM.
pub(crate) async fn run_http(port: u16) -> ExitCode {
    let listener =
        match tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("mcp-mock-server: cannot listen on port {port}: {error}");
                return ExitCode::FAILURE;
            }
        };
    let stop = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_sse_retry(Some(std::time::Duration::from_millis(500)))
        .with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        || Ok(Conformance),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let Ok(address) = listener.local_addr() else {
        return ExitCode::FAILURE;
    };
    let ended = stop.clone();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { ended.cancelled().await })
            .await
    });
    print_listening(address);
    wait_for_signal().await;
    stop.cancel();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), server).await;
    ExitCode::SUCCESS
}
