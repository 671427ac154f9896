/*
 * compress.c: HTTP content codings, as DynamoDB handles them.
 *
 * Requests: "Content-Encoding: gzip" bodies (the SDKs' request compression)
 * are inflated before the JSON is read; several concatenated gzip members
 * are one body (RFC 1952).  Responses: a client that sends Accept-Encoding
 * with gzip or deflate gets bodies of 4 KB or more compressed (DynamoDB's
 * threshold), and x-amz-crc32 is then the CRC of the compressed bytes.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "gateway.h"

int
gw_gunzip(const char *in, size_t len, size_t max_out, Buf *out)
{
	size_t		pos = 0;
	char		chunk[16384];

	if (len == 0)
		return GW_GUNZIP_CORRUPT;
	while (pos < len)
	{
		z_stream	zs;
		int			zr;

		memset(&zs, 0, sizeof(zs));
		if (inflateInit2(&zs, 15 + 16) != Z_OK)
			return GW_GUNZIP_OOM;
		zs.next_in = (Bytef *) (in + pos);
		zs.avail_in = (uInt) (len - pos);
		do
		{
			zs.next_out = (Bytef *) chunk;
			zs.avail_out = sizeof(chunk);
			zr = inflate(&zs, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END)
			{
				inflateEnd(&zs);
				return GW_GUNZIP_CORRUPT;
			}
			buf_append(out, chunk, sizeof(chunk) - zs.avail_out);
			if (out->oom)
			{
				inflateEnd(&zs);
				return GW_GUNZIP_OOM;
			}
			if (out->len > max_out)
			{
				inflateEnd(&zs);
				return GW_GUNZIP_TOO_LARGE;
			}
			/* No progress and no more input: the member is cut short. */
			if (zr == Z_OK && zs.avail_in == 0 && zs.avail_out != 0)
			{
				inflateEnd(&zs);
				return GW_GUNZIP_CORRUPT;
			}
		} while (zr != Z_STREAM_END);
		pos = len - zs.avail_in;
		inflateEnd(&zs);
	}
	if (out->data == NULL)
		buf_append(out, "", 0);
	return out->oom ? GW_GUNZIP_OOM : GW_GUNZIP_OK;
}

/* Trim spaces and tabs from [*s, *e). */
static void
trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

static bool
token_is(const char *s, const char *e, const char *word)
{
	size_t		n = strlen(word);

	return (size_t) (e - s) == n && strncasecmp(s, word, n) == 0;
}

/*
 * The q of one Accept-Encoding element's parameters [s, e): the first "q"
 * parameter; a value that is not a number is ignored (q stays 1); values
 * are clamped to [0, 1].
 */
static double
element_q(const char *s, const char *e)
{
	while (s < e)
	{
		const char *pe = memchr(s, ';', (size_t) (e - s));
		const char *eq;

		if (pe == NULL)
			pe = e;
		eq = memchr(s, '=', (size_t) (pe - s));
		if (eq)
		{
			const char *ns = s,
					   *ne = eq,
					   *vs = eq + 1,
					   *ve = pe;

			trim(&ns, &ne);
			trim(&vs, &ve);
			if (token_is(ns, ne, "q"))
			{
				char		v[32];
				char	   *end;
				double		q;
				size_t		n = (size_t) (ve - vs);

				if (n == 0 || n >= sizeof(v))
					return 1.0;
				memcpy(v, vs, n);
				v[n] = '\0';
				if (!(isdigit((unsigned char) v[0]) || v[0] == '-' || v[0] == '+' || v[0] == '.'))
					return 1.0;
				q = strtod(v, &end);
				if (*end != '\0' || q != q)
					return 1.0;
				return q < 0 ? 0 : (q > 1 ? 1 : q);
			}
		}
		s = pe < e ? pe + 1 : e;
	}
	return 1.0;
}

int
gw_accept_encoding(const char *header)
{
	/* per coding: the highest q listed, where first listed; and "*" */
	double		q[2] = {-1, -1};
	int			at[2] = {0, 0};
	double		star = -1;
	const char *s = header;
	int			idx = 0;
	double		eff[2];
	bool		explicit_[2];
	int			best;

	if (header == NULL)
		return GW_ENC_NONE;
	while (*s)
	{
		const char *e = strchr(s, ',');
		const char *ts,
				   *te;
		double		eq;

		if (e == NULL)
			e = s + strlen(s);
		ts = s;
		te = memchr(s, ';', (size_t) (e - s));
		if (te == NULL)
			te = e;
		trim(&ts, &te);
		eq = element_q(te < e ? te + 1 : e, e);
		idx++;
		if (token_is(ts, te, "gzip") || token_is(ts, te, "deflate"))
		{
			int			k = token_is(ts, te, "gzip") ? 0 : 1;

			if (q[k] < 0)
				at[k] = idx;
			if (eq > q[k])
				q[k] = eq;
		}
		else if (token_is(ts, te, "*"))
		{
			if (eq > star)
				star = eq;
		}
		s = *e ? e + 1 : e;
	}
	for (int k = 0; k < 2; k++)
	{
		explicit_[k] = q[k] >= 0;
		eff[k] = explicit_[k] ? q[k] : (star >= 0 ? star : 0);
	}
	if (eff[0] <= 0 && eff[1] <= 0)
		return GW_ENC_NONE;
	if (eff[0] != eff[1])
		best = eff[0] > eff[1] ? 0 : 1;
	else if (explicit_[0] && explicit_[1])
		best = at[0] < at[1] ? 0 : 1;
	else if (explicit_[1])
		best = 1;				/* a coding named beats one that "*" covers */
	else
		best = 0;				/* gzip first */
	return best == 0 ? GW_ENC_GZIP : GW_ENC_DEFLATE;
}

bool
gw_compress(int enc, const char *in, size_t len, char **out, size_t *out_len)
{
	z_stream	zs;
	uLong		bound;
	char	   *o;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
					 enc == GW_ENC_GZIP ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	bound = deflateBound(&zs, (uLong) len) + 32;
	o = malloc(bound);
	if (o == NULL)
	{
		deflateEnd(&zs);
		return false;
	}
	zs.next_in = (Bytef *) in;
	zs.avail_in = (uInt) len;
	zs.next_out = (Bytef *) o;
	zs.avail_out = (uInt) bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
	{
		deflateEnd(&zs);
		free(o);
		return false;
	}
	*out_len = bound - zs.avail_out;
	*out = o;
	deflateEnd(&zs);
	return true;
}
