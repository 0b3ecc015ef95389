//! The hive's rules, without IO of their own: pure functions and small state
//! machines that the service layer (`crate::service`) applies with the store
//! and the container driver.
//!
//! - [`agenda`]: questions, reminders, schedules: scoping, due times,
//!   targets, file paths, caps.
//! - [`approvals`]: the approval state machine.
//! - [`broker`]: who a message reaches (`<parent>`, `<children>`, names).
//! - [`topology`]: the parent tree and its move rules.
//! - [`roster`]: how a roster row is built; what a crash is.

pub mod agenda;
pub mod approvals;
pub mod broker;
pub mod roster;
pub mod topology;
