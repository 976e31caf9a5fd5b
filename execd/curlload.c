/* SPDX-License-Identifier: MIT */
/* libcurl for the webhook backend, loaded when that backend first calls it
 * instead of at the daemon's start: libcurl and what it pulls in (a TLS
 * library, Kerberos, LDAP, SSH, HTTP/2, IDN: some thirty libraries) were
 * about half of the daemon's resident size while most daemons use another
 * backend. backend_webhook.c calls the curl_* functions below as it would
 * libcurl's own; each forwards to the library's, which is dlopen()ed once
 * by soname (libcurl.so.4, the ABI curl/curl.h describes). When it cannot be
 * loaded, curl_global_init() fails and the backend does not open (fail
 * closed, with the loader's message in the log). */
#define CURL_DISABLE_TYPECHECK 1 /* the variadic setopt/getinfo are defined here */
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#include "log.h"

#define CURLLOAD_SONAME "libcurl.so.4"
/* curl_url_get()'s handle became const in curl 8 (as the header says). */
#if LIBCURL_VERSION_NUM >= 0x080000
#define CURLLOAD_URL_CONST const
#else
#define CURLLOAD_URL_CONST
#endif

static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	void (*free)(void *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLU *(*url)(void);
	void (*url_cleanup)(CURLU *);
	CURLUcode (*url_get)(CURLLOAD_URL_CONST CURLU *, CURLUPart, char **, unsigned int);
	CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
	curl_version_info_data *(*version_info)(CURLversion);
} fn;
static bool loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void *sym(void *lib, const char *name, bool *ok)
{
	void *p = dlsym(lib, name);

	if (!p)
		*ok = false;
	return p;
}

/* POSIX lets a dlsym() result be converted to a function pointer. */
#define LOAD(field, name) (*(void **)&fn.field = sym(lib, name, &ok))

static void load(void)
{
	void *lib = dlopen(CURLLOAD_SONAME, RTLD_NOW | RTLD_LOCAL);
	bool ok = true;

	if (!lib) {
		log_error("Cannot load %s for the webhook backend: %s", CURLLOAD_SONAME, dlerror());
		return;
	}
	LOAD(global_init, "curl_global_init");
	LOAD(easy_init, "curl_easy_init");
	LOAD(easy_cleanup, "curl_easy_cleanup");
	LOAD(easy_perform, "curl_easy_perform");
	LOAD(easy_setopt, "curl_easy_setopt");
	LOAD(easy_getinfo, "curl_easy_getinfo");
	LOAD(easy_strerror, "curl_easy_strerror");
	LOAD(free, "curl_free");
	LOAD(slist_append, "curl_slist_append");
	LOAD(slist_free_all, "curl_slist_free_all");
	LOAD(url, "curl_url");
	LOAD(url_cleanup, "curl_url_cleanup");
	LOAD(url_get, "curl_url_get");
	LOAD(url_set, "curl_url_set");
	LOAD(version_info, "curl_version_info");
	if (!ok) {
		log_error("%s lacks a function the webhook backend needs: %s", CURLLOAD_SONAME, dlerror());
		return; /* stays loaded, unused: dlclose() of a half-used library helps nobody */
	}
	loaded = true;
}

static bool ready(void)
{
	(void)pthread_once(&load_once, load);
	return loaded;
}

/* The backend calls curl_global_init() first (backend_webhook.c); every
 * other function is reached only after it succeeded, so after ready(). */
CURLcode curl_global_init(long flags)
{
	return ready() ? fn.global_init(flags) : CURLE_FAILED_INIT;
}

CURL *curl_easy_init(void)
{
	return ready() ? fn.easy_init() : NULL;
}

void curl_easy_cleanup(CURL *h)
{
	if (ready())
		fn.easy_cleanup(h);
}

CURLcode curl_easy_perform(CURL *h)
{
	return ready() ? fn.easy_perform(h) : CURLE_FAILED_INIT;
}

/* The option number says the argument's type (curl/curl.h, CURLOPTTYPE_*):
 * long, an object or function pointer, curl_off_t, or a blob pointer. */
CURLcode curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
	va_list ap;
	CURLcode c;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
	/* long and curl_off_t are one type on LP64 only: */
	/* NOLINTBEGIN(bugprone-branch-clone) */
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		c = fn.easy_setopt(h, opt, va_arg(ap, long));
	else if (opt >= CURLOPTTYPE_OFF_T && opt < CURLOPTTYPE_BLOB)
		c = fn.easy_setopt(h, opt, va_arg(ap, curl_off_t));
	else
		c = fn.easy_setopt(h, opt, va_arg(ap, void *));
	/* NOLINTEND(bugprone-branch-clone) */
	va_end(ap);
	return c;
}

/* Every CURLINFO_* takes a pointer to where the value goes. */
CURLcode curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	va_list ap;
	CURLcode c;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, info);
	c = fn.easy_getinfo(h, info, va_arg(ap, void *));
	va_end(ap);
	return c;
}

const char *curl_easy_strerror(CURLcode c)
{
	return ready() ? fn.easy_strerror(c) : "libcurl could not be loaded (see the log)";
}

void curl_free(void *p)
{
	if (ready())
		fn.free(p);
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
	return ready() ? fn.slist_append(l, s) : NULL;
}

void curl_slist_free_all(struct curl_slist *l)
{
	if (ready())
		fn.slist_free_all(l);
}

CURLU *curl_url(void)
{
	return ready() ? fn.url() : NULL;
}

void curl_url_cleanup(CURLU *u)
{
	if (ready())
		fn.url_cleanup(u);
}

CURLUcode curl_url_get(CURLLOAD_URL_CONST CURLU *u, CURLUPart what, char **part, unsigned int flags)
{
	return ready() ? fn.url_get(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}

CURLUcode curl_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags)
{
	return ready() ? fn.url_set(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}

curl_version_info_data *curl_version_info(CURLversion v)
{
	return ready() ? fn.version_info(v) : NULL;
}
