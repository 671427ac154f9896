/*
 * ion_write.c — items as Amazon Ion text, the subset DynamoDB's ION exports
 * use (docs/import-export.md, "Why our own Ion writer"): no Ion library is
 * packaged in Debian, and the subset is small.
 *
 *   S    "string"                 (escapes \" \\ \n \r \t, other controls \xHH)
 *   N    decimal: 12d0, 1.5d0, -3.25d-4  (a 'd' exponent always: an Ion decimal,
 *        never an int or a float, whatever digits the number has)
 *   B    {{base64}}
 *   BOOL true | false;  NULL  null
 *   M    {name:value,...}   field names as symbols, quoted 'like this' when
 *        not identifiers
 *   L    [value,...]
 *   SS   $dynamodb_SS::["a","b"]   NS $dynamodb_NS::[1d0]   BS $dynamodb_BS::[{{..}}]
 *
 * An item line is {Item:{...}}; a data file starts with the version marker
 * $ion_1_0.  Strings holding U+0000 (escaped inside jsonb, types/nulstr.c)
 * are written with \x00.
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "exchange/export.h"
#include "types/types.h"

/* Append s (len bytes, nulstr-escaped) as the body of an Ion string or quoted symbol. */
static void
ion_escaped(StringInfo out, const char *s, int len, char quote)
{
	int			n;
	const char *d = DynNulDecode(s, len, &n);

	for (int i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) d[i];

		if (c == (unsigned char) quote || c == '\\')
		{
			appendStringInfoChar(out, '\\');
			appendStringInfoChar(out, c);
		}
		else if (c == '\n')
			appendStringInfoString(out, "\\n");
		else if (c == '\r')
			appendStringInfoString(out, "\\r");
		else if (c == '\t')
			appendStringInfoString(out, "\\t");
		else if (c < 0x20 || c == 0x7f)
			appendStringInfo(out, "\\x%02x", c);
		else
			appendStringInfoChar(out, c);
	}
}

/* Is name an Ion identifier symbol (no quotes needed)? */
static bool
ion_identifier(const char *s, int len)
{
	static const char *const keywords[] = {"null", "true", "false", "nan", NULL};

	if (len == 0 || (!isalpha((unsigned char) s[0]) && s[0] != '_' && s[0] != '$'))
		return false;
	for (int i = 0; i < len; i++)
		if (!isalnum((unsigned char) s[i]) && s[i] != '_' && s[i] != '$')
			return false;
	/* $ion..., $<digits> and the keywords have meanings of their own */
	if (s[0] == '$')
		return false;
	for (const char *const *k = keywords; *k; k++)
		if ((int) strlen(*k) == len && memcmp(*k, s, len) == 0)
			return false;
	return true;
}

/* Append a field name. */
static void
ion_field(StringInfo out, const char *s, int len)
{
	if (ion_identifier(s, len))
		appendBinaryStringInfo(out, s, len);
	else
	{
		appendStringInfoChar(out, '\'');
		ion_escaped(out, s, len, '\'');
		appendStringInfoChar(out, '\'');
	}
}

/* Append a DynamoDB number (canonical text) as an Ion decimal. */
static void
ion_decimal(StringInfo out, const char *s, int len)
{
	const char *e = NULL;

	for (int i = 0; i < len; i++)
		if (s[i] == 'e' || s[i] == 'E')
			e = s + i;
	if (e == NULL)
	{
		appendBinaryStringInfo(out, s, len);
		appendStringInfoString(out, "d0");
	}
	else
	{
		appendBinaryStringInfo(out, s, e - s);
		appendStringInfoChar(out, 'd');
		/* Ion's exponent takes no '+' */
		if (e + 1 < s + len && e[1] == '+')
			e++;
		appendBinaryStringInfo(out, e + 1, (s + len) - (e + 1));
	}
}

/* Append the elements of a set or list container, each written by kind. */
static void
ion_elements(StringInfo out, JsonbContainer *arr, char kind)
{
	JsonbIterator *it = JsonbIteratorInit(arr);
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		first = true;

	appendStringInfoChar(out, '[');
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (!first)
			appendStringInfoChar(out, ',');
		first = false;
		if (kind == 'L')
		{
			if (v.type == jbvBinary)
				DynIonWriteValue(out, v.val.binary.data);
			else
				elog(ERROR, "malformed stored item: a list element is not an AttributeValue");
		}
		else if (v.type != jbvString)
			elog(ERROR, "malformed stored item: a set element is not a string");
		else if (kind == 'S')
		{
			appendStringInfoChar(out, '"');
			ion_escaped(out, v.val.string.val, v.val.string.len, '"');
			appendStringInfoChar(out, '"');
		}
		else if (kind == 'N')
			ion_decimal(out, v.val.string.val, v.val.string.len);
		else
		{
			appendStringInfoString(out, "{{");
			appendBinaryStringInfo(out, v.val.string.val, v.val.string.len);
			appendStringInfoString(out, "}}");
		}
	}
	appendStringInfoChar(out, ']');
}

/* Append a map of AttributeValues as an Ion struct. */
static void
ion_struct(StringInfo out, JsonbContainer *map)
{
	JsonbIterator *it = JsonbIteratorInit(map);
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		first = true;

	appendStringInfoChar(out, '{');
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			if (!first)
				appendStringInfoChar(out, ',');
			first = false;
			ion_field(out, v.val.string.val, v.val.string.len);
			appendStringInfoChar(out, ':');
		}
		else if (tok == WJB_VALUE)
		{
			if (v.type != jbvBinary)
				elog(ERROR, "malformed stored item: a member is not an AttributeValue");
			DynIonWriteValue(out, v.val.binary.data);
		}
	}
	appendStringInfoChar(out, '}');
}

/* Append one AttributeValue as an Ion value. */
void
DynIonWriteValue(StringInfo out, JsonbContainer *attrvalue)
{
	JsonbIterator *it = JsonbIteratorInit(attrvalue);
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char		type[5] = {0};

	tok = JsonbIteratorNext(&it, &k, true);
	if (tok != WJB_BEGIN_OBJECT || JsonbIteratorNext(&it, &k, true) != WJB_KEY ||
		k.val.string.len < 1 || k.val.string.len > 4 ||
		JsonbIteratorNext(&it, &v, true) != WJB_VALUE)
		elog(ERROR, "malformed stored item: not an AttributeValue");
	memcpy(type, k.val.string.val, k.val.string.len);

	if (strcmp(type, "S") == 0 && v.type == jbvString)
	{
		appendStringInfoChar(out, '"');
		ion_escaped(out, v.val.string.val, v.val.string.len, '"');
		appendStringInfoChar(out, '"');
	}
	else if (strcmp(type, "N") == 0 && v.type == jbvString)
		ion_decimal(out, v.val.string.val, v.val.string.len);
	else if (strcmp(type, "B") == 0 && v.type == jbvString)
	{
		appendStringInfoString(out, "{{");
		appendBinaryStringInfo(out, v.val.string.val, v.val.string.len);
		appendStringInfoString(out, "}}");
	}
	else if (strcmp(type, "BOOL") == 0 && v.type == jbvBool)
		appendStringInfoString(out, v.val.boolean ? "true" : "false");
	else if (strcmp(type, "NULL") == 0)
		appendStringInfoString(out, "null");
	else if (strcmp(type, "M") == 0 && v.type == jbvBinary)
		ion_struct(out, v.val.binary.data);
	else if (strcmp(type, "L") == 0 && v.type == jbvBinary)
		ion_elements(out, v.val.binary.data, 'L');
	else if ((strcmp(type, "SS") == 0 || strcmp(type, "NS") == 0 || strcmp(type, "BS") == 0) &&
			 v.type == jbvBinary)
	{
		appendStringInfo(out, "$dynamodb_%s::", type);
		ion_elements(out, v.val.binary.data, type[0]);
	}
	else
		elog(ERROR, "malformed stored item: unknown AttributeValue type");
}

/* Append an item as an Ion struct. */
void
DynIonWriteItem(StringInfo out, JsonbContainer *item)
{
	ion_struct(out, item);
}
