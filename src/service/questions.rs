//! Questions: `ask` routes a question to the operator or to an agent,
//! `answer` closes it once and tells the asker.
//!
//! The question row and the `question_asked` message (likewise the answer
//! and `question_answered`) are written in one transaction: a question is
//! never half-asked, an answer never lost between the two writes.

use super::messaging::{self, Wakes};
use super::{Hive, HiveError};
use crate::hive::Recipient;
use crate::hive::agenda::{
    AgendaError, Answerer, MAX_OPEN_QUESTIONS, QUESTION_MAX, TTL_WATCHDOG, check_len,
};
use crate::store::agents::ident;
use crate::store::questions::{self, NewQuestion, QuestionRow};
use crate::store::{StoreError, immediate};
use crate::wire::agenda::WireQuestion;
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};
use crate::wire::ident::Ident;

impl Hive {
    /// Queue a question from `asker` to `to` (an agent) or, with `None`, to
    /// the operator; its id. The target agent gets `question_asked` from
    /// `system`. A `ttl_seconds` that runs out closes it as `ttl-watchdog`.
    pub async fn ask(
        &self,
        asker: &Ident,
        question: String,
        options: Vec<String>,
        multi: bool,
        ttl_seconds: Option<u64>,
        to: Option<Ident>,
    ) -> Result<i64, HiveError> {
        check_len("the question", &question, QUESTION_MAX, "")?;
        let options_len: usize = options.iter().map(String::len).sum();
        if options_len > QUESTION_MAX {
            return Err(AgendaError::TooLong {
                what: "the options together",
                len: options_len,
                max: QUESTION_MAX,
                hint: "",
            }
            .into());
        }
        if let Some(target) = &to {
            self.require(target).await?;
        }
        let now = self.now();
        let expires_at =
            ttl_seconds.map(|t| now.saturating_add(i64::try_from(t).unwrap_or(i64::MAX)));
        let new = NewQuestion {
            asker: asker.to_string(),
            target: to.as_ref().map(ToString::to_string),
            question,
            options,
            multi,
            expires_at,
        };
        let target = to.clone();
        let (id, wakes) = self
            .transact(move |c| {
                let tx = immediate(c)?;
                if questions::count_open_of(&tx, &new.asker)? >= MAX_OPEN_QUESTIONS {
                    return Err(AgendaError::TooMany {
                        who: new.asker.clone(),
                        what: "open questions",
                        max: MAX_OPEN_QUESTIONS,
                    }
                    .into());
                }
                let id = questions::insert(&tx, &new, now)?;
                // The target hears of it in its inbox: an agent to `recv`,
                // the operator in `hivectl inbox` (and `hivectl questions`).
                let event = HelperEvent::QuestionAsked {
                    id,
                    asker: new.asker.clone(),
                    question: new.question.clone(),
                    options: new.options.clone(),
                    multi: new.multi,
                };
                let to = match &target {
                    Some(agent) => Recipient::Agent(agent.clone()),
                    None => Recipient::Operator,
                };
                let (_, mut wakes) =
                    messaging::insert(&tx, SYSTEM_SENDER, &to, &event.to_body(), None, now)?;
                // The open questions changed, whoever was asked.
                wakes.add(Wakes::of(Recipient::Operator));
                tx.commit()?;
                Ok((id, wakes))
            })
            .await?;
        self.mail().wake(wakes);
        tracing::info!(id, asker = %asker, to = ?to.as_ref().map(Ident::as_str), "question asked");
        Ok(id)
    }

    /// Answer question `id`. Only its target agent or the operator may; a
    /// question takes one answer. The asker gets `question_answered`.
    pub async fn answer(
        &self,
        answerer: Answerer,
        id: i64,
        answer: String,
    ) -> Result<(), HiveError> {
        check_len("the answer", &answer, QUESTION_MAX, "")?;
        let name = answerer.name().to_owned();
        self.close_question(id, answer, name, move |row| match &answerer {
            Answerer::Operator => Ok(()),
            Answerer::Agent(me) if row.target.as_deref() == Some(me.as_str()) => Ok(()),
            Answerer::Agent(me) => Err(AgendaError::NotTheTarget {
                id,
                caller: me.to_string(),
            }),
        })
        .await
    }

    /// Close an open question and tell its asker, if `allowed` says so.
    async fn close_question(
        &self,
        id: i64,
        answer: String,
        answerer: String,
        allowed: impl FnOnce(&QuestionRow) -> Result<(), AgendaError> + Send + 'static,
    ) -> Result<(), HiveError> {
        let now = self.now();
        let wakes = self
            .transact(move |c| {
                let tx = immediate(c)?;
                let Some(row) = questions::get(&tx, id)? else {
                    return Err(AgendaError::UnknownQuestion(id).into());
                };
                if let Some(by) = &row.answerer {
                    return Err(AgendaError::QuestionClosed { id, by: by.clone() }.into());
                }
                if let Err(refused) = allowed(&row) {
                    return Err(refused.into());
                }
                let asker = ident(row.asker.clone())?;
                if !questions::close(&tx, id, &answer, &answerer, now)? {
                    return Err(StoreError::Corrupt(format!("question {id} closed twice")).into());
                }
                let event = HelperEvent::QuestionAnswered {
                    id,
                    question: row.question,
                    answer,
                    answerer,
                };
                let to = Recipient::Agent(asker);
                let (_, mut wakes) =
                    messaging::insert(&tx, SYSTEM_SENDER, &to, &event.to_body(), None, now)?;
                // The open questions changed.
                wakes.add(Wakes::of(Recipient::Operator));
                tx.commit()?;
                Ok(wakes)
            })
            .await?;
        self.mail().wake(wakes);
        tracing::info!(id, "question answered");
        Ok(())
    }

    /// Withdraw an open question; only its asker may.
    pub(crate) async fn withdraw_question(&self, owner: &Ident, id: i64) -> Result<(), HiveError> {
        let owner = owner.to_string();
        let now = self.now();
        self.transact(move |c| {
            let tx = immediate(c)?;
            let Some(row) = questions::get(&tx, id)? else {
                return Err(AgendaError::UnknownQuestion(id).into());
            };
            if row.asker != owner {
                return Err(AgendaError::NotTheOwner {
                    kind: "question",
                    id,
                }
                .into());
            }
            if let Some(by) = row.answerer {
                return Err(AgendaError::QuestionClosed { id, by }.into());
            }
            questions::close(&tx, id, "", "cancelled", now)?;
            tx.commit()?;
            Ok(())
        })
        .await?;
        self.mail().wake(Wakes::of(Recipient::Operator));
        Ok(())
    }

    /// Close every question whose TTL ran out, as `ttl-watchdog`. How many.
    pub(crate) async fn expire_questions(&self) -> Result<usize, HiveError> {
        let now = self.now();
        let due = self
            .store()
            .run(move |c| questions::expired(c, now))
            .await?;
        let mut closed = 0;
        for row in due {
            let ttl = row.expires_at.unwrap_or(now).saturating_sub(row.asked_at);
            let text = format!("(no answer within the question's {ttl} s time to live)");
            match self
                .close_question(row.id, text, TTL_WATCHDOG.to_owned(), |_| Ok(()))
                .await
            {
                Ok(()) => closed += 1,
                // Answered meanwhile: the answer won, nothing to do.
                Err(HiveError::Agenda(AgendaError::QuestionClosed { .. })) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(closed)
    }

    /// Every open question, oldest first (the operator's view).
    pub async fn open_questions(&self) -> Result<Vec<WireQuestion>, HiveError> {
        let rows = self.store().read(questions::open).await?;
        Ok(rows
            .into_iter()
            .map(|r| WireQuestion {
                id: r.id,
                asker: r.asker,
                target: r.target,
                question: r.question,
                options: r.options,
                multi: r.multi,
                asked_at: r.asked_at,
                expires_at: r.expires_at,
            })
            .collect())
    }
}
