/*
 * util.c — growable buffer, JSON string escaping, request ids, logging.
 */
#include "gateway.h"

#include <ctype.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

void
buf_init(Buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->oom = false;
}

void
buf_free(Buf *b)
{
	free(b->data);
	buf_init(b);
}

static bool
buf_reserve(Buf *b, size_t extra)
{
	size_t		need;
	size_t		cap;
	char	   *p;

	if (b->oom)
		return false;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (p == NULL)
	{
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void
buf_append(Buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_puts(Buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void
buf_printf(Buf *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_reserve(b, (size_t) n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t) n;
}

void
buf_json_string(Buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *) s;
	const unsigned char *run = p;

	buf_append(b, "\"", 1);
	for (; *p; p++)
	{
		const char *esc = NULL;
		char		tmp[8];

		switch (*p)
		{
			case '"':
				esc = "\\\"";
				break;
			case '\\':
				esc = "\\\\";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\r':
				esc = "\\r";
				break;
			case '\t':
				esc = "\\t";
				break;
			case '\b':
				esc = "\\b";
				break;
			case '\f':
				esc = "\\f";
				break;
			default:
				if (*p < 0x20)
				{
					snprintf(tmp, sizeof(tmp), "\\u%04x", *p);
					esc = tmp;
				}
		}
		if (esc)
		{
			buf_append(b, (const char *) run, (size_t) (p - run));
			buf_puts(b, esc);
			run = p + 1;
		}
	}
	buf_append(b, (const char *) run, (size_t) (p - run));
	buf_append(b, "\"", 1);
}

char *
buf_steal(Buf *b, size_t *len)
{
	char	   *d;

	if (b->oom)
	{
		buf_free(b);
		return NULL;
	}
	if (b->data == NULL)
		buf_append(b, "", 0);
	if (b->oom)
		return NULL;
	d = b->data;
	if (len)
		*len = b->len;
	buf_init(b);
	return d;
}

size_t
gw_json_compact(char *s, size_t len)
{
	size_t		o = 0;
	bool		in_string = false;

	for (size_t i = 0; i < len; i++)
	{
		char		ch = s[i];

		if (in_string)
		{
			s[o++] = ch;
			if (ch == '\\' && i + 1 < len)
				s[o++] = s[++i];
			else if (ch == '"')
				in_string = false;
		}
		else if (ch == '"')
		{
			in_string = true;
			s[o++] = ch;
		}
		else if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
			s[o++] = ch;
	}
	if (o < len)
		s[o] = '\0';
	return o;
}

/*
 * Request ids need to be unique, not secret: a splitmix64 generator seeded
 * once from OpenSSL (RAND_bytes on every request cost a getpid() system call
 * each time, OpenSSL's fork check).
 */
static uint64_t rid_state;
static bool rid_seeded;

static uint64_t
rid_next(void)
{
	uint64_t	z = (rid_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

void
gw_request_id(char out[53])
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	if (!rid_seeded)
	{
		if (RAND_bytes((unsigned char *) &rid_state, sizeof(rid_state)) != 1)
			rid_state = (uint64_t) time(NULL) ^ ((uint64_t) rand() << 32);
		rid_seeded = true;
	}
	for (int i = 0; i < 52; i += 12)
	{
		uint64_t	r = rid_next();

		/* 12 characters of 36 from one 64-bit draw (36^12 < 2^63) */
		for (int k = 0; k < 12 && i + k < 52; k++)
		{
			out[i + k] = alphabet[r % 36];
			r /= 36;
		}
	}
	out[52] = '\0';
}

/*
 * Raise the open-file limit as far as allowed; return max_connections
 * lowered to what it leaves after `reserved` descriptors of the process's own
 * (the gateway's pool; a background worker's PostgreSQL files).
 */
int
gw_fit_file_limit(int max_connections, long reserved)
{
	struct rlimit rl;
	long		need;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return max_connections;
	if (rl.rlim_cur < rl.rlim_max)
	{
		rl.rlim_cur = rl.rlim_max;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
		(void) getrlimit(RLIMIT_NOFILE, &rl);
	}
	/* client sockets, room for those being closed, the reserved ones, a margin */
	need = (long) max_connections + max_connections / 4 + 64 + reserved + 64;
	if (rl.rlim_cur != RLIM_INFINITY && need > (long) rl.rlim_cur)
	{
		long		fit = ((long) rl.rlim_cur - 128 - reserved) * 4 / 5;

		/*
		 * At least a few: PostgreSQL closes its cached files when an open()
		 * fails for the limit, so a worker's sockets may take some of their room.
		 */
		if (fit < 64)
			fit = 64;
		gw_log("the open-file limit (%ld) allows %ld connections: the connection limit is lowered from %d",
			   (long) rl.rlim_cur, fit, max_connections);
		return (int) fit;
	}
	return max_connections;
}

/* Set by dynindex_http: messages go to PostgreSQL's log instead of stderr. */
void		(*gw_log_hook) (const char *msg) = NULL;

void
gw_log(const char *fmt,...)
{
	va_list		ap;
	char		ts[32];
	char		msg[2048];
	char	   *w = msg;
	time_t		now = time(NULL);
	struct tm	tm;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One line per message: libpq's messages span lines. */
	for (const char *r = msg; *r; r++)
	{
		char		ch = (*r == '\n' || *r == '\t') ? ' ' : *r;

		if (ch == ' ' && w > msg && w[-1] == ' ')
			continue;
		*w++ = ch;
	}
	while (w > msg && w[-1] == ' ')
		w--;
	*w = '\0';
	if (gw_log_hook)
		gw_log_hook(msg);
	else
		fprintf(stderr, "%s dynindex-gateway: %s\n", ts, msg);
}

/* Skip JSON whitespace. */
const char *
gw_json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/*
 * Skip one JSON string (p at its opening quote); NULL if malformed.
 * *escaped (unless NULL): the string holds a backslash escape.
 */
const char *
gw_json_skip_string(const char *p, bool *escaped)
{
	if (escaped)
		*escaped = false;
	for (p++; *p; p++)
	{
		if (*p == '\\')
		{
			if (escaped)
				*escaped = true;
			if (*++p == '\0')
				return NULL;
		}
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Skip one JSON value of any kind; NULL if malformed. */
const char *
gw_json_skip_value(const char *p)
{
	int			depth = 0;

	p = gw_json_ws(p);
	for (;;)
	{
		if (*p == '\0')
			return depth == 0 ? p : NULL;
		if (*p == '"')
		{
			p = gw_json_skip_string(p, NULL);
			if (p == NULL || depth == 0)
				return p;
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
		{
			if (depth == 0)
				return p;
			if (--depth == 0)
				return p + 1;
		}
		else if (depth == 0 && (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			return p;
		p++;
	}
}

char *
gw_json_top_string(const char *json, const char *name)
{
	const char *p;
	size_t		nlen = strlen(name);

	if (json == NULL)
		return NULL;
	p = gw_json_ws(json);
	if (*p != '{')
		return NULL;
	p = gw_json_ws(p + 1);
	while (*p == '"')
	{
		const char *kstart = p + 1;
		const char *kend = gw_json_skip_string(p, NULL);
		bool		match;

		if (kend == NULL)
			return NULL;
		match = (size_t) (kend - 1 - kstart) == nlen && memcmp(kstart, name, nlen) == 0;
		p = gw_json_ws(kend);
		if (*p != ':')
			return NULL;
		p = gw_json_ws(p + 1);
		if (match && *p == '"')
		{
			const char *vend = gw_json_skip_string(p, NULL);
			Buf			b;

			if (vend == NULL)
				return NULL;
			/* unescape the simple escapes; others are kept as written */
			buf_init(&b);
			for (const char *q = p + 1; q < vend - 1; q++)
			{
				if (*q == '\\' && q + 1 < vend - 1)
				{
					q++;
					switch (*q)
					{
						case 'n':
							buf_append(&b, "\n", 1);
							break;
						case 't':
							buf_append(&b, "\t", 1);
							break;
						case 'u':
							buf_append(&b, "\\u", 2);
							break;
						default:
							buf_append(&b, q, 1);
					}
				}
				else
					buf_append(&b, q, 1);
			}
			return buf_steal(&b, NULL);
		}
		p = gw_json_skip_value(p);
		if (p == NULL)
			return NULL;
		p = gw_json_ws(p);
		if (*p != ',')
			return NULL;
		p = gw_json_ws(p + 1);
	}
	return NULL;
}

/* Scan a JSON string at s[*i] (an opening quote); false if malformed. */
static bool
json_scan_string(const char *s, size_t len, size_t *i)
{
	size_t		p = *i + 1;

	while (p < len)
	{
		unsigned char ch = (unsigned char) s[p];

		if (ch == '"')
		{
			*i = p + 1;
			return true;
		}
		if (ch < 0x20)
			return false;
		if (ch == '\\')
		{
			if (++p >= len)
				return false;
			if (s[p] == 'u')
			{
				for (int k = 1; k <= 4; k++)
					if (p + k >= len || !isxdigit((unsigned char) s[p + k]))
						return false;
				p += 4;
			}
			else if (strchr("\"\\/bfnrt", s[p]) == NULL || s[p] == '\0')
				return false;
		}
		p++;
	}
	return false;
}

/* Scan a JSON number at s[*i]; false if malformed. */
static bool
json_scan_number(const char *s, size_t len, size_t *i)
{
	size_t		p = *i;

	if (p < len && s[p] == '-')
		p++;
	if (p >= len || !isdigit((unsigned char) s[p]))
		return false;
	if (s[p] == '0')
		p++;
	else
		while (p < len && isdigit((unsigned char) s[p]))
			p++;
	if (p < len && s[p] == '.')
	{
		p++;
		if (p >= len || !isdigit((unsigned char) s[p]))
			return false;
		while (p < len && isdigit((unsigned char) s[p]))
			p++;
	}
	if (p < len && (s[p] == 'e' || s[p] == 'E'))
	{
		p++;
		if (p < len && (s[p] == '+' || s[p] == '-'))
			p++;
		if (p >= len || !isdigit((unsigned char) s[p]))
			return false;
		while (p < len && isdigit((unsigned char) s[p]))
			p++;
	}
	*i = p;
	return true;
}

/*
 * Is s[0..len) one JSON text (RFC 8259 syntax)?  Iterative, so any nesting
 * depth is checked without recursion; limits on depth are PostgreSQL's.
 */
bool
gw_json_valid(const char *s, size_t len)
{
	enum
	{
		J_VALUE, J_VALUE_OR_END, J_KEY, J_KEY_OR_END, J_COLON, J_AFTER
	}			st = J_VALUE;
	Buf			stack;
	size_t		i = 0;
	bool		ok = false;

	buf_init(&stack);
	for (;;)
	{
		char		ch;

		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			i++;
		if (i == len)
		{
			ok = st == J_AFTER && stack.len == 0;
			break;
		}
		ch = s[i];
		if (st == J_VALUE || st == J_VALUE_OR_END)
		{
			if (st == J_VALUE_OR_END && ch == ']')
			{
				stack.len--;
				i++;
				st = J_AFTER;
			}
			else if (ch == '{' || ch == '[')
			{
				buf_append(&stack, &ch, 1);
				if (stack.oom)
					break;
				i++;
				st = ch == '{' ? J_KEY_OR_END : J_VALUE_OR_END;
			}
			else if (ch == '"')
			{
				if (!json_scan_string(s, len, &i))
					break;
				st = J_AFTER;
			}
			else if (ch == '-' || isdigit((unsigned char) ch))
			{
				if (!json_scan_number(s, len, &i))
					break;
				st = J_AFTER;
			}
			else if (len - i >= 4 && (memcmp(s + i, "true", 4) == 0 || memcmp(s + i, "null", 4) == 0))
			{
				i += 4;
				st = J_AFTER;
			}
			else if (len - i >= 5 && memcmp(s + i, "false", 5) == 0)
			{
				i += 5;
				st = J_AFTER;
			}
			else
				break;
		}
		else if (st == J_KEY || st == J_KEY_OR_END)
		{
			if (st == J_KEY_OR_END && ch == '}')
			{
				stack.len--;
				i++;
				st = J_AFTER;
			}
			else if (ch == '"' && json_scan_string(s, len, &i))
				st = J_COLON;
			else
				break;
		}
		else if (st == J_COLON)
		{
			if (ch != ':')
				break;
			i++;
			st = J_VALUE;
		}
		else
		{
			char		top;

			if (stack.len == 0)
				break;			/* something after the one value */
			top = stack.data[stack.len - 1];
			if (ch == ',')
				st = top == '{' ? J_KEY : J_VALUE;
			else if ((ch == '}' && top == '{') || (ch == ']' && top == '['))
				stack.len--;
			else
				break;
			i++;
		}
	}
	buf_free(&stack);
	return ok;
}

/* Append s as a Prometheus label value (quoted, escaped): metrics.c's and standby.c's labels. */
void
label_value(Buf *b, const char *s)
{
	buf_puts(b, "\"");
	for (; *s; s++)
	{
		if (*s == '\\' || *s == '"')
		{
			buf_append(b, "\\", 1);
			buf_append(b, s, 1);
		}
		else if (*s == '\n')
			buf_puts(b, "\\n");
		else
			buf_append(b, s, 1);
	}
	buf_puts(b, "\"");
}
