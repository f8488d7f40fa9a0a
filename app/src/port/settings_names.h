/*
 * The rules for settings names, shared by both ports' settings stores so that a name the
 * simulator accepts is one the firmware accepts. Standard C only, no OS header.
 */
#ifndef AGENT_SETTINGS_NAMES_H
#define AGENT_SETTINGS_NAMES_H

#include <stdbool.h>

/**
 * Length of a valid key: 1 to AGENT_SETTINGS_KEY_MAX visible ASCII characters other than
 * '='. -EINVAL otherwise (NULL included).
 */
int agent_settings_key_len(const char *key);

/**
 * Length of a subtree name without trailing '/' ("agent/" names the same subtree as
 * "agent"); 0 for NULL or "" (every key). -EINVAL for a name no key could start with.
 */
int agent_settings_subtree_len(const char *subtree);

/**
 * Whether @p path is @p store_path or starts with it (the store's siblings). Both absolute;
 * NULL is false.
 */
bool agent_settings_path_in_store(const char *path, const char *store_path);

#endif /* AGENT_SETTINGS_NAMES_H */
