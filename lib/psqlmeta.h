/* SPDX-License-Identifier: MIT */
/* psql meta-commands (backslash commands) in SQL text the agent wrote: a
 * `psql -c` string or a `-f` script. psql runs several of them on the
 * client, that is on the host: `\! cmd` and backticks run a shell, `\o |cmd`
 * and `\g |cmd` pipe into one, `\copy ... program`, `\w`, `\o FILE` write
 * files, `\i`/`\ir` read them, `\setenv` changes the environment of what it
 * runs. Pure code: finds every meta-command the way psql's lexer does
 * (outside quoted strings, quoted identifiers, dollar quotes and comments)
 * and accepts only a read-only list: the \d family, \l, \x, \conninfo,
 * \timing. Arguments may not contain backticks (psql runs them).
 *
 * The server's standard_conforming_strings decides whether a backslash
 * escapes a quote in '...': the text is scanned both ways and refused if
 * either reading finds a refused command, so the answer does not depend on
 * a setting the agent may control. */
#ifndef CS_PSQLMETA_H
#define CS_PSQLMETA_H

#include <stdbool.h>
#include <stddef.h>

#define PSQLMETA_MAX_TEXT ((size_t)8 * 1024 * 1024) /* bytes scanned; longer is refused */
#define PSQLMETA_MAX_NAME 32                        /* meta-command name, bytes */

struct psqlmeta_result {
	size_t n_commands;             /* meta-commands found (both readings, counted once) */
	size_t offset;                 /* of the refused command's backslash */
	char name[PSQLMETA_MAX_NAME];  /* the refused command without its backslash */
	const char *why;               /* static reason */
};

/* Checks text[0..len). 0 when every meta-command in it is on the read-only
 * list (or there is none), -EPERM with *ret filled when one is not (or an
 * argument has a backtick), -E2BIG over PSQLMETA_MAX_TEXT, -EINVAL for a
 * NUL byte. */
int psqlmeta_check(const char *text, size_t len, struct psqlmeta_result *ret);

/* True when NAME (without the backslash) is on the read-only list. */
bool psqlmeta_name_allowed(const char *name);

#endif
