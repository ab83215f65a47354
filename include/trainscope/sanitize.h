/*
 * sanitize.h - the one sanitiser for text that reaches a terminal.
 *
 * Kernel names, file names and log text are data from whoever wrote the
 * input: a raw ESC ]0; retitles a terminal window, ESC [2J clears it, a
 * bidi override reorders what is shown. Every table, message and other
 * text output goes through ts_text_sanitize on its way out (cli_emit and
 * the error/warning lines), so what is printed is always valid UTF-8 with
 * only \n and \t as controls. Replacements are visible:
 *   C0 controls (except \n, \t), DEL        ->  \xHH   (e.g. ESC -> \x1b)
 *   C1 controls U+0080..U+009F              ->  \u00HH
 *   bidi embeddings/overrides/isolates      ->  \u202e etc.
 *   a byte that is not valid UTF-8          ->  \xHH   (e.g. \xff)
 * With keep_sgr, colour sequences ESC [ digits/; m (at most 16 bytes) are
 * kept: SGR only changes colours, and the CLI's own colours use it.
 */
#ifndef TRAINSCOPE_SANITIZE_H
#define TRAINSCOPE_SANITIZE_H

#include <stddef.h>
#include "trainscope/core.h"

/* Append s[0..n) sanitised to out. */
void ts_text_sanitize(struct ts_sb *out, const char *s, size_t n, int keep_sgr);

/* 1 when s[0..n) needs no change (the fast path; no allocation). */
int ts_text_is_clean(const char *s, size_t n, int keep_sgr);

#endif
