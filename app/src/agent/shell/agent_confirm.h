/*
 * The tool confirmation shared by the frontends (agent ask, the chat): the request worker
 * waits while the console's input delivers the answer. Only y allows; n and Enter deny; no
 * answer within the deadline denies; Esc (or the app-exit key) cancels the whole request.
 */
#ifndef AGENT_CONFIRM_H
#define AGENT_CONFIRM_H

#include <stdbool.h>
#include <stdint.h>

/**
 * Worker side, before the question is shown: from now on a key is taken as the answer
 * (a key typed as soon as the question appears must not be lost).
 */
void agent_confirm_arm(void);

/**
 * Worker side, after agent_confirm_arm() and the question: wait for the answer. 1 allows, 0 denies (also on the deadline, and when no
 * semaphore could be made), -ECANCELED cancels. @p timed_out is set when the deadline passed.
 */
int agent_confirm_wait(bool *timed_out);

/**
 * Input side: offer one key. True when it answered the waiting confirmation (y/Y allow;
 * n/N, CR and LF deny); other keys are not taken.
 */
bool agent_confirm_key(uint8_t key);

/** Input side: Esc or the app-exit key while waiting: the answer is "cancel". */
void agent_confirm_cancel(void);

#endif /* AGENT_CONFIRM_H */
