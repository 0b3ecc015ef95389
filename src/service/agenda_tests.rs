//! Agenda tests.
