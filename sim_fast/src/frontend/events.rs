//! Where the front end's events go (`docs/trace-format.md`, "Execution
//! record"): a sink that records them, or one that drops them (long runs
//! without expectations). The front end builds an event only for a sink
//! that keeps it.

use sbrp_trace::Event;

/// Receives the front end's events in cycle order.
pub trait EventSink {
    /// `make` builds the event; a sink that drops events never calls it.
    fn emit(&mut self, make: &dyn Fn() -> Event);
    /// The events kept so far (emptied).
    fn take(&mut self) -> Vec<Event>;
}

/// Keeps every event.
#[derive(Debug, Default)]
pub struct RecordingSink {
    pub events: Vec<Event>,
}

impl EventSink for RecordingSink {
    fn emit(&mut self, make: &dyn Fn() -> Event) {
        self.events.push(make());
    }
    fn take(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }
}

/// Drops every event.
#[derive(Debug, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&mut self, _make: &dyn Fn() -> Event) {}
    fn take(&mut self) -> Vec<Event> {
        vec![]
    }
}
