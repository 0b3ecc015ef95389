//! The topology tree: every agent has at most one parent; roots have none.
//!
//! Pure rules over a snapshot of the registry's parent column. The store
//! applies a move only after [`Topology::check_move`] allowed it, inside the
//! same write transaction, so two racing moves cannot build a cycle.

use std::collections::BTreeMap;
use std::convert::Infallible;

use super::Outcome;
use crate::wire::ident::Ident;

/// Why a move is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("agent \"{0}\" is not managed by this hive")]
    UnknownChild(Ident),
    #[error("agent \"{0}\" is not managed by this hive")]
    UnknownParent(Ident),
    #[error("agent \"{0}\" cannot be its own parent")]
    SelfParent(Ident),
    #[error(
        "moving \"{child}\" under \"{parent}\" would make a cycle: \"{parent}\" is below \"{child}\""
    )]
    Cycle { child: Ident, parent: Ident },
}

/// The questions a `send` asks of the tree (see
/// [`super::broker::resolve`]), answered by a whole snapshot
/// ([`Topology`]) or by the store one indexed row lookup at a time — the
/// broker's hot path, which must not read every agent to deliver to one.
pub trait Tree {
    /// Why an answer could not be read (`Infallible` for a snapshot).
    type Error;
    fn contains(&self, name: &Ident) -> Result<bool, Self::Error>;
    /// The agent's parent; `None` for a root or an unknown agent.
    fn parent_of(&self, name: &Ident) -> Result<Option<Ident>, Self::Error>;
    /// Direct children, by name.
    fn children(&self, name: &Ident) -> Result<Vec<Ident>, Self::Error>;
}

impl Tree for Topology {
    type Error = Infallible;
    fn contains(&self, name: &Ident) -> Result<bool, Infallible> {
        Ok(Topology::contains(self, name))
    }
    fn parent_of(&self, name: &Ident) -> Result<Option<Ident>, Infallible> {
        Ok(Topology::parent_of(self, name).cloned())
    }
    fn children(&self, name: &Ident) -> Result<Vec<Ident>, Infallible> {
        Ok(Topology::children(self, name))
    }
}

/// A snapshot of the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    parents: BTreeMap<Ident, Option<Ident>>,
}

impl Topology {
    pub fn new(parents: BTreeMap<Ident, Option<Ident>>) -> Self {
        Self { parents }
    }

    /// How many agents the tree holds.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    pub fn contains(&self, name: &Ident) -> bool {
        self.parents.contains_key(name)
    }

    /// The agent's parent; `None` for a root or an unknown agent.
    pub fn parent_of(&self, name: &Ident) -> Option<&Ident> {
        self.parents.get(name).and_then(Option::as_ref)
    }

    /// Direct children, by name.
    pub fn children(&self, name: &Ident) -> Vec<Ident> {
        self.parents
            .iter()
            .filter(|(_, p)| p.as_ref() == Some(name))
            .map(|(c, _)| c.clone())
            .collect()
    }

    /// Every descendant, parents before children, by name within a depth.
    pub fn descendants(&self, name: &Ident) -> Vec<Ident> {
        let mut out = Vec::new();
        let mut tier = self.children(name);
        while !tier.is_empty() {
            let next: Vec<Ident> = tier.iter().flat_map(|c| self.children(c)).collect();
            out.append(&mut tier);
            tier = next;
            tier.sort();
        }
        out
    }

    /// Is `ancestor` on the path from `name` up to its root?
    pub fn is_below(&self, name: &Ident, ancestor: &Ident) -> bool {
        let mut seen = 0;
        let mut at = self.parent_of(name);
        while let Some(p) = at {
            if p == ancestor {
                return true;
            }
            seen += 1;
            if seen > self.parents.len() {
                return false; // a cycle in stored data; refuse to loop
            }
            at = self.parent_of(p);
        }
        false
    }

    /// May `child` move under `new_parent` (`None` = root)?
    pub fn check_move(
        &self,
        child: &Ident,
        new_parent: Option<&Ident>,
    ) -> Result<Outcome, TopologyError> {
        if !self.contains(child) {
            return Err(TopologyError::UnknownChild(child.clone()));
        }
        if let Some(parent) = new_parent {
            if !self.contains(parent) {
                return Err(TopologyError::UnknownParent(parent.clone()));
            }
            if parent == child {
                return Err(TopologyError::SelfParent(child.clone()));
            }
            if self.is_below(parent, child) {
                return Err(TopologyError::Cycle {
                    child: child.clone(),
                    parent: parent.clone(),
                });
            }
        }
        if self.parent_of(child) == new_parent {
            Ok(Outcome::AlreadyInState)
        } else {
            Ok(Outcome::Done)
        }
    }
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
