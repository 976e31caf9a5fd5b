/* SPDX-License-Identifier: MIT */
/* webhook: asks an HTTP(S) service (README.md, "Webhook protocol").
 *
 *   POST webhook_url            body: request JSON (lib/authzjson.h)
 *     -> 200 {"decision":"approved"|"denied"|"pending", ...}
 *   while pending, every webhook_poll_ms:
 *   GET  webhook_url/ID         (ID from the pending answer)
 *     -> 200 {"decision":...}
 *
 * Each exchange is bounded by webhook_timeout_ms (connect and total), the
 * whole decision by decision_timeout_ms. TLS peer and host verification are
 * always on; plain http:// is accepted only for a loopback host, because an
 * answer in clear text anywhere else could be forged by anyone on the path
 * and the bearer token would travel readable (loopback is for tests and a
 * policy server on the same machine). Redirects are not followed, proxies
 * from the environment are not used, answers are capped at
 * AUTHZJSON_MAX_DECISION bytes. Every failure is a denial.
 *
 * Thread safety: curl_global_init once (at the first open, before the
 * daemon serves), one easy handle per exchange, CURLOPT_NOSIGNAL so that
 * timeouts never use signals. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "authzjson.h"
#include "backend.h"
#include "backend_ops.h"
#include "log.h"
#include "monoclock.h"

#define WEBHOOK_MAX_URL 2048
#define WEBHOOK_MAX_TOKEN 4096

struct backend {
	char *url;     /* without a trailing slash */
	char *token;   /* secret or NULL; wiped at close */
	char *ca_file; /* or NULL */
	unsigned timeout_ms, poll_ms, decision_timeout_ms;
};

struct body {
	char *buf;
	size_t len;
	bool too_large;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result = CURLE_FAILED_INIT;

static void curl_init(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Signed, for deadline arithmetic (lib/monoclock.h reads the clock). */
static long long now_ms(void)
{
	return (long long)monoclock_ms();
}

DEFINE_TRIVIAL_CLEANUP_FUNC(CURLU *, curl_url_cleanup)

static void curl_freep(char **p)
{
	if (*p)
		curl_free(*p);
}

static bool host_is_loopback(const char *host)
{
	struct in_addr a;

	if (strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0)
		return true;
	/* 127.0.0.0/8, in the one dotted-quad spelling inet_pton accepts. */
	return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* Checks the URL (scheme, loopback rule, no userinfo, query or fragment,
 * which the poll URL could not carry) and returns a copy without trailing
 * slashes. */
static int check_url(const char *url, char **ret, char *reterr, size_t reterr_len)
{
	_cleanup_(curl_url_cleanupp) CURLU *u = NULL;
	_cleanup_(curl_freep) char *scheme = NULL, *host = NULL, *user = NULL, *query = NULL,
				   *frag = NULL;
	size_t n;
	char *copy;

	if (!url || strlen(url) >= WEBHOOK_MAX_URL) {
		(void)snprintf(reterr, reterr_len,
			       "backend 'webhook' needs a URL (webhook_url = https://...)");
		return -EINVAL;
	}
	u = curl_url();
	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		(void)snprintf(reterr, reterr_len, "webhook_url '%s' is not a valid URL", url);
		return -EINVAL;
	}
	if (strcmp(scheme, "https") != 0 && !(strcmp(scheme, "http") == 0 && host_is_loopback(host))) {
		(void)snprintf(reterr, reterr_len,
			       "webhook_url must be https:// (http:// only for a loopback host)");
		return -EINVAL;
	}
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK) {
		(void)snprintf(reterr, reterr_len,
			       "webhook_url must not contain credentials, a query or a fragment "
			       "(use webhook_token_file for a token)");
		return -EINVAL;
	}
	copy = strdup(url);
	if (!copy)
		return -ENOMEM;
	n = strlen(copy);
	while (n > 0 && copy[n - 1] == '/')
		copy[--n] = '\0';
	*ret = copy;
	return 0;
}

static void webhook_close(struct backend *b)
{
	if (!b)
		return;
	if (b->token) {
		explicit_bzero(b->token, strlen(b->token));
		free(b->token);
	}
	free(b->url);
	free(b->ca_file);
	free(b);
}

static int webhook_open(const struct backend_config *cfg, struct backend **ret, char *reterr,
			size_t reterr_len)
{
	struct backend *b;
	int r;

	if (cfg->webhook_timeout_ms == 0 || cfg->webhook_poll_ms == 0 ||
	    cfg->decision_timeout_ms == 0) {
		(void)snprintf(reterr, reterr_len,
			       "webhook_timeout_ms, webhook_poll_ms and decision_timeout_ms must be "
			       "positive");
		return -EINVAL;
	}
	(void)pthread_once(&curl_once, curl_init);
	if (curl_init_result != CURLE_OK) {
		(void)snprintf(reterr, reterr_len, "libcurl initialisation failed: %s",
			       curl_easy_strerror(curl_init_result));
		return -EIO;
	}
	if (!(curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_SSL)) {
		(void)snprintf(reterr, reterr_len, "libcurl has no TLS support");
		return -EOPNOTSUPP;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		(void)snprintf(reterr, reterr_len, "out of memory");
		return -ENOMEM;
	}
	b->timeout_ms = cfg->webhook_timeout_ms;
	b->poll_ms = cfg->webhook_poll_ms;
	b->decision_timeout_ms = cfg->decision_timeout_ms;
	r = check_url(cfg->webhook_url, &b->url, reterr, reterr_len);
	if (r < 0)
		goto fail;
	if (cfg->webhook_token_file) {
		size_t len = 0;

		r = backend_read_file("webhook token file", cfg->webhook_token_file,
				      WEBHOOK_MAX_TOKEN, true, &b->token, &len, reterr, reterr_len);
		if (r < 0)
			goto fail;
		while (len > 0 && (b->token[len - 1] == '\n' || b->token[len - 1] == '\r'))
			b->token[--len] = '\0';
		/* Visible ASCII only: anything else could split the header. */
		for (size_t i = 0; i < len && r >= 0; i++)
			if (b->token[i] < 0x21 || b->token[i] > 0x7e)
				r = -EINVAL;
		if (len == 0 || r < 0) {
			(void)snprintf(reterr, reterr_len,
				       "webhook token file '%s' must hold one token of visible ASCII",
				       cfg->webhook_token_file);
			r = -EINVAL;
			goto fail;
		}
	}
	if (cfg->webhook_ca_file) {
		struct stat st;

		if (cfg->webhook_ca_file[0] != '/' || stat(cfg->webhook_ca_file, &st) < 0 ||
		    !S_ISREG(st.st_mode)) {
			(void)snprintf(reterr, reterr_len,
				       "webhook_ca_file '%s' must be an absolute path to a file",
				       cfg->webhook_ca_file);
			r = -EINVAL;
			goto fail;
		}
		b->ca_file = strdup(cfg->webhook_ca_file);
		if (!b->ca_file) {
			r = -ENOMEM;
			goto fail;
		}
	}
	*ret = b;
	return 0;
fail:
	webhook_close(b);
	return r;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct body *body = userdata;
	size_t n = size * nmemb;

	if (n > AUTHZJSON_MAX_DECISION - body->len) {
		body->too_large = true;
		return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
	}
	memcpy(body->buf + body->len, data, n);
	body->len += n;
	return n;
}

static void slist_wipe_free(struct curl_slist *l)
{
	for (struct curl_slist *i = l; i; i = i->next)
		if (i->data)
			explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(l);
}

/* One HTTP exchange: POST json to url when json is non-NULL, else GET.
 * Fills body. Returns 0, or -ETIMEDOUT / -EMSGSIZE / -EPROTO / -EIO with
 * *reterr a static description. */
static int exchange(const struct backend *b, const char *url, const char *json, size_t json_len,
		    long long deadline, struct body *body, const char **reterr)
{
	CURL *h;
	struct curl_slist *headers = NULL, *tmp;
	char auth[WEBHOOK_MAX_TOKEN + 32];
	long long left = deadline - now_ms();
	long timeout = (long)(left < (long long)b->timeout_ms ? left : (long long)b->timeout_ms);
	long status = 0;
	CURLcode c;
	int r = 0;

	if (timeout <= 0) {
		*reterr = "no decision in time";
		return -ETIMEDOUT;
	}
	h = curl_easy_init();
	if (!h) {
		*reterr = "libcurl handle";
		return -ENOMEM;
	}
	headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (headers && (tmp = curl_slist_append(headers, "Accept: application/json")))
		headers = tmp;
	if (headers && (tmp = curl_slist_append(headers, "Expect:")))
		headers = tmp;
	if (headers && b->token) {
		(void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", b->token);
		tmp = curl_slist_append(headers, auth);
		explicit_bzero(auth, sizeof(auth));
		if (!tmp) {
			slist_wipe_free(headers);
			headers = NULL;
		} else
			headers = tmp;
	}
	if (!headers) {
		curl_easy_cleanup(h);
		*reterr = "out of memory";
		return -ENOMEM;
	}
	body->len = 0;
	body->too_large = false;
	c = curl_easy_setopt(h, CURLOPT_URL, url);
	/* Belt and braces: these are libcurl defaults, but the decision to
	 * trust an answer rests on them. */
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c == CURLE_OK && b->ca_file)
		c = curl_easy_setopt(h, CURLOPT_CAINFO, b->ca_file);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_PROXY, "");
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE,
				     (curl_off_t)AUTHZJSON_MAX_DECISION);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_USERAGENT, "sandbox-execd");
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	if (c == CURLE_OK)
		c = curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	if (c == CURLE_OK && json) {
		c = curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
		if (c == CURLE_OK)
			c = curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)json_len);
	}
	if (c != CURLE_OK) {
		*reterr = "libcurl option";
		r = -EIO;
		goto out;
	}
	c = curl_easy_perform(h);
	if (body->too_large || c == CURLE_FILESIZE_EXCEEDED) {
		*reterr = "answer too large";
		r = -EMSGSIZE;
	} else if (c == CURLE_OPERATION_TIMEDOUT) {
		*reterr = "the webhook timed out";
		r = -ETIMEDOUT;
	} else if (c != CURLE_OK) {
		*reterr = curl_easy_strerror(c); /* static strings */
		r = -EIO;
	} else if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK ||
		   status != 200) {
		*reterr = status >= 300 && status < 400 ? "the webhook answered with a redirect"
							: "the webhook answered with an HTTP error";
		r = -EPROTO;
	}
out:
	curl_easy_cleanup(h);
	slist_wipe_free(headers);
	return r;
}

static void pause_until(long long when)
{
	for (;;) {
		long long left = when - now_ms();
		struct timespec ts;

		if (left <= 0)
			return;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		if (nanosleep(&ts, NULL) == 0)
			return;
	}
}

static int webhook_decide(struct backend *b, const struct authz_request *req,
			  struct authz_decision *d)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_(backend_answer_freep) char *answer = NULL;
	struct body body = { 0 };
	struct authzjson_answer a = { .state = AUTHZJSON_DENIED };
	char url[WEBHOOK_MAX_URL + AUTHZJSON_MAX_ID + 2];
	char reason[AUTHZ_MAX_REASON];
	long long deadline = now_ms() + b->decision_timeout_ms;
	const char *why = NULL;
	size_t json_len = 0;
	int r;

	authz_decision_clear(d);
	r = authzjson_encode_request(req, &json, &json_len);
	if (r < 0)
		return backend_deny(d, r, "webhook", "denied: the request could not be encoded");
	answer = malloc(AUTHZJSON_MAX_DECISION + 1);
	body.buf = answer;
	if (!body.buf)
		return backend_deny(d, -ENOMEM, "webhook", "denied: out of memory");

	r = exchange(b, b->url, json, json_len, deadline, &body, &why);
	for (unsigned polls = 0;; polls++) {
		if (r >= 0) {
			struct authzjson_answer prev = a;

			r = authzjson_parse_decision(body.buf, body.len, &a, d, &why);
			if (r >= 0 && polls > 0 && a.state == AUTHZJSON_PENDING &&
			    strcmp(a.id, prev.id) != 0) {
				why = "the pending id changed while polling";
				r = -EPROTO;
			}
		}
		if (r < 0 || a.state != AUTHZJSON_PENDING)
			break;
		if (now_ms() + b->poll_ms >= deadline) {
			why = "no decision within decision_timeout_ms";
			r = -ETIMEDOUT;
			break;
		}
		pause_until(now_ms() + b->poll_ms);
		(void)snprintf(url, sizeof(url), "%s/%s", b->url, a.id);
		r = exchange(b, url, NULL, 0, deadline, &body, &why);
	}
	if (r < 0) {
		log_warn("Webhook gave no usable decision (%s), denying", why ? why : "?");
		(void)snprintf(reason, sizeof(reason), "denied: the approval service failed (%s)",
			       why ? why : "error");
		return backend_deny(d, r, "webhook", reason);
	}
	(void)snprintf(d->rule, sizeof(d->rule), "webhook");
	if (!d->reason[0])
		(void)snprintf(d->reason, sizeof(d->reason), "%s by the approval service",
			       d->verdict == AUTHZ_ALLOW ? "approved" : "denied");
	return 0;
}

const struct backend_ops backend_webhook_ops = {
	.name = "webhook",
	.open = webhook_open,
	.decide = webhook_decide,
	.close = webhook_close,
};
