/* SPDX-License-Identifier: MIT */
/* PID 1 lives as long as the container: keep its resident memory to what
 * the loop uses. */
#ifndef CS_INIT_MEMTRIM_H
#define CS_INIT_MEMTRIM_H

/* Called once, after the agent started and start-up state was freed:
 * returns the free heap to the kernel (malloc_trim) and drops this
 * process's page-table entries for the read-only code pages start-up
 * faulted in (the text of sandbox-init and of its libraries; the kernel's
 * fault-around maps 64 KiB per fault, so parsing, JSON and filter building
 * leave most of libc's text resident). Code pages are never written, so
 * MADV_DONTNEED only unmaps them: whatever the loop runs later is mapped
 * again from the page cache. Writable and anonymous mappings are never
 * touched. Best effort: failures are ignored. */
void memtrim_after_startup(void);

#endif
