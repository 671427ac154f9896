/*
 * selftest.c — unit tests of SigV4 and error mapping, run by
 * `dynindex-gateway --self-test` (test/clients/run.sh runs it).
 *
 * The SigV4 vector is AWS's published example (IAM ListUsers, 2015-08-30,
 * key AKIDEXAMPLE) from the SigV4 documentation.
 */
#include "gateway.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	failures;
static int	checks;

#define CHECK(cond, ...) \
	do { \
		checks++; \
		if (!(cond)) { \
			failures++; \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

static void
test_sigv4_vector(void)
{
	SigHeader	h[] = {
		{"host", "iam.amazonaws.com"},
		{"content-type", "application/x-www-form-urlencoded; charset=utf-8"},
		{"x-amz-date", "20150830T123600Z"},
	};
	SigRequest	r = {
		.method = "GET",
		.path = "/",
		.canonical_query = "Action=ListUsers&Version=2010-05-08",
		.headers = h,
		.nheaders = 3,
		.payload_hash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	};
	const char *authz = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		"SignedHeaders=content-type;host;x-amz-date, "
		"Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
	SigAuth		a;
	char		msg[1024];
	char		sig[65];
	char		hash[65];
	Buf			creq;

	CHECK(sigv4_parse(authz, "20150830T123600Z", &a, msg, sizeof(msg)) == SIG_OK, "parse: %s", msg);
	CHECK(strcmp(a.access_key, "AKIDEXAMPLE") == 0, "access key %s", a.access_key);
	CHECK(strcmp(a.region, "us-east-1") == 0, "region %s", a.region);
	CHECK(strcmp(a.signed_headers, "content-type;host;x-amz-date") == 0, "signed headers %s", a.signed_headers);

	buf_init(&creq);
	sigv4_canonical_request(&r, a.signed_headers, &creq);
	sigv4_hex_sha256(creq.data, creq.len, hash);
	CHECK(strcmp(hash, "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59") == 0,
		  "canonical request hash %s\n%s", hash, creq.data);
	buf_free(&creq);

	CHECK(sigv4_sign(&r, &a, "20150830T123600Z", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sig), "sign");
	CHECK(strcmp(sig, a.signature) == 0, "signature %s", sig);
	CHECK(sigv4_equal(sig, a.signature), "equal");
	CHECK(!sigv4_sign(&r, &a, "20150830T123600Z", "wrong", sig) || strcmp(sig, a.signature) != 0,
		  "a wrong secret must not verify");

	/* Header values are trimmed and inner runs of spaces collapsed. */
	h[1].value = "  application/x-www-form-urlencoded;   charset=utf-8  ";
	sigv4_sign(&r, &a, "20150830T123600Z", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sig);
	CHECK(strcmp(sig, a.signature) == 0, "trimmed header signature %s", sig);
}

static void
test_sigv4_checks(void)
{
	SigAuth		a;
	char		msg[1024];
	long		now = 1440938160;	/* 2015-08-30T12:36:00Z */

	CHECK(sigv4_parse(NULL, NULL, &a, msg, sizeof(msg)) == SIG_MISSING, "no header");
	CHECK(sigv4_parse("Basic abc", NULL, &a, msg, sizeof(msg)) == SIG_MISSING, "not AWS4");
	CHECK(sigv4_parse("AWS4-HMAC-SHA256 Signature=abc", "20150830T123600Z", &a, msg, sizeof(msg)) == SIG_INCOMPLETE,
		  "missing credential");
	CHECK(strstr(msg, "Authorization header requires 'Credential' parameter. ") != NULL, "%s", msg);
	CHECK(strstr(msg, "Authorization=AWS4-HMAC-SHA256 Signature=abc") != NULL, "%s", msg);
	CHECK(sigv4_parse("AWS4-HMAC-SHA1 Credential=a/b/c/d/e, SignedHeaders=host, Signature=x",
					  "20150830T123600Z", &a, msg, sizeof(msg)) == SIG_INCOMPLETE, "algorithm");
	CHECK(strcmp(msg, "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA1' (only AWS4-HMAC-SHA256 for now). ") == 0, "%s", msg);
	CHECK(sigv4_parse("AWS4-HMAC-SHA256 Credential=a/b/c/d, SignedHeaders=host, Signature=x",
					  "20150830T123600Z", &a, msg, sizeof(msg)) == SIG_INCOMPLETE, "credential parts");
	CHECK(strcmp(msg, "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got 'a/b/c/d'") == 0,
		  "%s", msg);

	CHECK(sigv4_parse("AWS4-HMAC-SHA256 Credential=AK/20150830/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=x",
					  "20150830T123600Z", &a, msg, sizeof(msg)) == SIG_OK, "ok: %s", msg);
	CHECK(sigv4_check_scope(&a, "20150830T123600Z", now, msg, sizeof(msg)) == SIG_OK, "scope: %s", msg);
	CHECK(sigv4_check_scope(&a, "2015", now, msg, sizeof(msg)) == SIG_INCOMPLETE, "bad date");
	CHECK(sigv4_check_scope(&a, "20150830T120000Z", now, msg, sizeof(msg)) == SIG_INVALID, "expired");
	CHECK(strcmp(msg, "Signature expired: 20150830T120000Z is now earlier than 20150830T122100Z (20150830T123600Z - 15 min.)") == 0,
		  "%s", msg);
	CHECK(sigv4_check_scope(&a, "20150830T130000Z", now, msg, sizeof(msg)) == SIG_INVALID, "future");

	CHECK(sigv4_parse("AWS4-HMAC-SHA256 Credential=AK/20150830/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=x",
					  "20150830T123600Z", &a, msg, sizeof(msg)) == SIG_OK, "parse s3");
	CHECK(sigv4_check_scope(&a, "20150830T123600Z", now, msg, sizeof(msg)) == SIG_INVALID, "service");
	CHECK(strcmp(msg, "Credential should be scoped to correct service: 'dynamodb'.") == 0, "%s", msg);

	CHECK(sigv4_parse("AWS4-HMAC-SHA256 Credential=AK/20150830/us-east-1/dynamodb/aws4_request, SignedHeaders=x-amz-date, Signature=x",
					  "20150830T123600Z", &a, msg, sizeof(msg)) == SIG_OK, "parse no host");
	CHECK(sigv4_check_scope(&a, "20150830T123600Z", now, msg, sizeof(msg)) == SIG_INVALID, "host not signed");
	CHECK(strcmp(msg, "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.") == 0, "%s", msg);
}

static void
expect_error(const char *sqlstate, const char *message, const char *detail,
			 int status, const char *body)
{
	GwError		e;

	gw_error_from_pg(&e, sqlstate, message, detail, "PutItem", "Thread", "app_rw", "eu-west-1");
	CHECK(e.status == status, "%s: status %d, expected %d", sqlstate, e.status, status);
	CHECK(strcmp(e.body, body) == 0, "%s:\n  got      %s\n  expected %s", sqlstate, e.body, body);
	free(e.body);
}

static void
test_json_compact(void)
{
	char		a[] = "{\"a\": 1, \"b\": [1, 2, {\"c\": null}],\n \"s\": \"x y, z: w \\\"q\\\" \\\\\", \"t\": \"\\\\\"}";
	const char *want = "{\"a\":1,\"b\":[1,2,{\"c\":null}],\"s\":\"x y, z: w \\\"q\\\" \\\\\",\"t\":\"\\\\\"}";
	size_t		n = gw_json_compact(a, strlen(a));

	CHECK(n == strlen(want) && strcmp(a, want) == 0, "json compact: got %s", a);
}

/* The JSON syntax check that runs before the target check. */
static void
test_json_valid(void)
{
	static const char *const good[] = {
		"{}", " {\"a\": [1, -2.5e+3, true, false, null, \"x\\u00e9\\n\"]} ", "7", "[1]", "\"s\"",
		"{\"TableName\":\"t\",\"Item\":{\"p\":{\"S\":\"x\"}}}", "[[[[[]]]]]", "0", "-0.0e0", "{\"\":{}}",
	};
	static const char *const bad[] = {
		"", " ", "}}}", "}{", "habababa", "124463gwe", "><#", "????", "\"\"\"", "{\"\"\"}", "{\"\"}",
		"{7}", "{3: }}", "{\"2\":{}", ",", "{,}", "{{}}", "\"a\": \"b\"", "{{{", "{\"a\":", "{bad",
		"[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "tru", "nul", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
		"{} {}", "[1] x", "{\"a\":\"\x01\"}",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(gw_json_valid(good[i], strlen(good[i])), "valid JSON refused: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!gw_json_valid(bad[i], strlen(bad[i])), "invalid JSON accepted: %s", bad[i]);
	{
		/* deep nesting needs no recursion */
		size_t		n = 200000;
		char	   *deep = malloc(2 * n + 1);

		memset(deep, '[', n);
		memset(deep + n, ']', n);
		deep[2 * n] = '\0';
		CHECK(gw_json_valid(deep, 2 * n), "deeply nested JSON");
		CHECK(!gw_json_valid(deep, 2 * n - 1), "deeply nested JSON, one bracket short");
		free(deep);
	}
	{
		char	   *a = gw_json_top_string("{\"Key\":{\"TableName\":\"no\"}, \"TableName\" : \"T\\\"x\"}", "TableName");

		CHECK(a && strcmp(a, "T\"x") == 0, "top-level TableName: %s", a ? a : "(null)");
		free(a);
	}
}

static void
test_error_mapping(void)
{
	GwError		e;

	expect_error("YD001", "ValidationException: Query condition missed key schema element: pk", NULL, 400,
				 "{\"__type\":\"com.amazon.coral.validate#ValidationException\",\"message\":\"Query condition missed key schema element: pk\"}");
	expect_error("YD002", "ResourceNotFoundException: Requested resource not found", NULL, 400,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\",\"message\":\"Requested resource not found\"}");
	expect_error("YD004", "ConditionalCheckFailedException: The conditional request failed",
				 "{\"Item\": {\"pk\": {\"S\": \"a\"}}}", 400,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException\",\"message\":\"The conditional request failed\",\"Item\":{\"pk\":{\"S\":\"a\"}}}");
	expect_error("YD005", "TransactionCanceledException: Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]",
				 "{\"CancellationReasons\":[{\"Code\":\"None\"},{\"Code\":\"ConditionalCheckFailed\",\"Message\":\"The conditional request failed\"}]}", 400,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#TransactionCanceledException\",\"Message\":\"Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]\",\"CancellationReasons\":[{\"Code\":\"None\"},{\"Code\":\"ConditionalCheckFailed\",\"Message\":\"The conditional request failed\"}]}");
	expect_error("YD001", "ValidationException: a \"quoted\" \\ value\nnext", NULL, 400,
				 "{\"__type\":\"com.amazon.coral.validate#ValidationException\",\"message\":\"a \\\"quoted\\\" \\\\ value\\nnext\"}");
	expect_error("YD011", "UnknownOperationException: Unknown operation", NULL, 400,
				 "{\"__type\":\"com.amazon.coral.service#UnknownOperationException\",\"message\":\"Unknown operation\"}");
	expect_error("YD500", "InternalServerError: Internal server error", NULL, 500,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\",\"message\":\"Internal server error\"}");
	/* An empty or non-object DETAIL adds nothing. */
	expect_error("YD002", "ResourceNotFoundException: x", "{}", 400,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\",\"message\":\"x\"}");
	expect_error("YD002", "ResourceNotFoundException: x", "not json", 400,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\",\"message\":\"x\"}");
	expect_error("42501", "permission denied for table thread", NULL, 400,
				 "{\"__type\":\"com.amazon.coral.service#AccessDeniedException\",\"Message\":\"User: arn:aws:iam::000000000000:user/app_rw is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:eu-west-1:000000000000:table/Thread because no identity-based policy allows the dynamodb:PutItem action\"}");
	/* the extension's own AccessDenied names the table: kept, with the request's region */
	expect_error("42501", "AccessDeniedException: User: arn:aws:iam::000000000000:user/app_ro is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/Other because no identity-based policy allows the dynamodb:PutItem action",
				 NULL, 400,
				 "{\"__type\":\"com.amazon.coral.service#AccessDeniedException\",\"Message\":\"User: arn:aws:iam::000000000000:user/app_ro is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:eu-west-1:000000000000:table/Other because no identity-based policy allows the dynamodb:PutItem action\"}");
	/* the tagging operations name their table by ARN: it is the resource */
	gw_error_from_pg(&e, "42501", "permission denied for table tags", NULL, "TagResource",
					 "arn:aws:dynamodb:us-east-1:000000000000:table/Thread", "app_rw", "eu-west-1");
	CHECK(strcmp(e.body, "{\"__type\":\"com.amazon.coral.service#AccessDeniedException\",\"Message\":\"User: arn:aws:iam::000000000000:user/app_rw is not authorized to perform: dynamodb:TagResource on resource: arn:aws:dynamodb:us-east-1:000000000000:table/Thread because no identity-based policy allows the dynamodb:TagResource action\"}") == 0,
		  "TagResource AccessDenied: %s", e.body);
	free(e.body);
	expect_error("22012", "division by zero", NULL, 500,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\",\"message\":\"Internal server error\"}");
	expect_error(NULL, NULL, NULL, 500,
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\",\"message\":\"Internal server error\"}");

	gw_error_make(&e, "SerializationException", NULL, NULL);
	CHECK(e.status == 400 && strcmp(e.body, "{\"__type\":\"com.amazon.coral.service#SerializationException\"}") == 0,
		  "%s", e.body);
	free(e.body);
	gw_error_make(&e, "UnrecognizedClientException", "The security token included in the request is invalid.", NULL);
	CHECK(strcmp(e.body, "{\"__type\":\"com.amazon.coral.service#UnrecognizedClientException\",\"message\":\"The security token included in the request is invalid.\"}") == 0,
		  "%s", e.body);
	free(e.body);
}

static void
test_request_id(void)
{
	char		a[53];
	char		b[53];

	gw_request_id(a);
	gw_request_id(b);
	CHECK(strlen(a) == 52, "length %zu", strlen(a));
	CHECK(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == 52, "alphabet %s", a);
	CHECK(strcmp(a, b) != 0, "ids differ");
}

/* Accept-Encoding choices DynamoDB makes (as Alternator's tests record them). */
static void
test_accept_encoding(void)
{
	static const struct
	{
		const char *h;
		int			enc;
	}			cases[] = {
		{"identity", GW_ENC_NONE}, {"", GW_ENC_NONE}, {"br", GW_ENC_NONE}, {"x-gzip", GW_ENC_NONE},
		{"gzip, deflate", GW_ENC_GZIP}, {"br, identity, deflate, gzip", GW_ENC_DEFLATE},
		{"GZIP, identity", GW_ENC_GZIP}, {"dog, gzip ,, cat", GW_ENC_GZIP},
		{"br, gzip;q=0, deflate; q = 0.5 , identity;q=0", GW_ENC_DEFLATE},
		{"*", GW_ENC_GZIP}, {"*, deflate", GW_ENC_DEFLATE}, {"*, gzip;q=0.5", GW_ENC_DEFLATE},
		{"*;q=0", GW_ENC_NONE}, {"gzip ;q=0", GW_ENC_NONE}, {"\"gzip\"", GW_ENC_NONE},
		{"gzip br", GW_ENC_NONE}, {"gzip:q=1", GW_ENC_NONE}, {"gzip;q=31,deflate;q=51", GW_ENC_GZIP},
		{"deflate;q=0.5, gzip;q=1;q=0.2", GW_ENC_GZIP}, {"deflate;q=0.5,gzip;q=0.", GW_ENC_DEFLATE},
		{"deflate;q=0.5,gzip;q=0.x", GW_ENC_GZIP}, {"deflate;q=-0.5,gzip;q=0.2", GW_ENC_GZIP},
		{"gzip;nq=1;q=0 ", GW_ENC_NONE}, {"gzip;q=0, gzip;q=1, gzip;q=0", GW_ENC_GZIP},
		{"br,identity;q=0.5,gzip;q=0.0001", GW_ENC_GZIP},
	};

	CHECK(gw_accept_encoding(NULL) == GW_ENC_NONE, "no header");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(gw_accept_encoding(cases[i].h) == cases[i].enc, "Accept-Encoding: %s", cases[i].h);
}

/* gzip round trip, concatenated members, and the failures that are HTTP 500. */
static void
test_gunzip(void)
{
	const char *text = "{\"TableName\":\"t\"}";
	char	   *z1,
			   *z2;
	size_t		n1,
				n2;
	char		both[512];
	Buf			out;

	CHECK(gw_compress(GW_ENC_GZIP, text, 5, &z1, &n1), "compress 1");
	CHECK(gw_compress(GW_ENC_GZIP, text + 5, strlen(text) - 5, &z2, &n2), "compress 2");
	memcpy(both, z1, n1);
	memcpy(both + n1, z2, n2);
	buf_init(&out);
	CHECK(gw_gunzip(both, n1 + n2, 1000, &out) == GW_GUNZIP_OK && strcmp(out.data, text) == 0,
		  "two members");
	buf_free(&out);
	buf_init(&out);
	CHECK(gw_gunzip(both, n1 + n2 - 1, 1000, &out) == GW_GUNZIP_CORRUPT, "cut short");
	buf_free(&out);
	memcpy(both + n1, "junk", 4);
	buf_init(&out);
	CHECK(gw_gunzip(both, n1 + 4, 1000, &out) == GW_GUNZIP_CORRUPT, "trailing junk");
	buf_free(&out);
	buf_init(&out);
	CHECK(gw_gunzip("", 0, 1000, &out) == GW_GUNZIP_CORRUPT, "empty");
	buf_free(&out);
	buf_init(&out);
	CHECK(gw_gunzip(text, strlen(text), 1000, &out) == GW_GUNZIP_CORRUPT, "not gzip");
	buf_free(&out);
	buf_init(&out);
	CHECK(gw_gunzip(both, n1 + n2, 3, &out) == GW_GUNZIP_TOO_LARGE, "limit");
	buf_free(&out);
	free(z1);
	free(z2);
}

/* Which requests may go to a standby (--standby): eventually consistent reads only. */
static void
test_eventual_read(void)
{
	static const struct
	{
		const char *op;
		const char *body;
		bool		eventual;
	}			cases[] = {
		{"GetItem", "{\"TableName\":\"T\",\"Key\":{\"k\":{\"S\":\"a\"}}}", true},
		{"GetItem", "{\"TableName\":\"T\",\"ConsistentRead\":false}", true},
		{"GetItem", "{ \"ConsistentRead\" : false , \"TableName\":\"T\"}", true},
		{"GetItem", "{\"TableName\":\"T\",\"ConsistentRead\":true}", false},
		{"GetItem", "{\"ConsistentRead\":false,\"ConsistentRead\":true}", false},
		{"GetItem", "{\"ConsistentRead\":\"false\"}", false},
		{"GetItem", "{\"ConsistentRead\":null}", false},
		{"GetItem", "{\"ConsistentRead\":falsey}", false},
		{"GetItem", "{\"Consistent\\u0052ead\":true}", false},	/* an escaped name could be anything */
		{"GetItem", "{\"TableName\":\"T\",\"Key\":{\"ConsistentRead\":{\"BOOL\":true}}}", true},
		{"GetItem", "{\"TableName\":\"T\"", false},
		{"GetItem", "[]", false},
		{"Query", "{\"TableName\":\"T\",\"IndexName\":\"g\",\"KeyConditionExpression\":\"k = :k\"}", true},
		{"Query", "{\"TableName\":\"T\",\"ConsistentRead\":true}", false},
		{"Scan", "{\"TableName\":\"T\",\"Segment\":0,\"TotalSegments\":2}", true},
		{"Scan", "{\"TableName\":\"T\",\"ConsistentRead\":true}", false},
		{"BatchGetItem", "{\"RequestItems\":{\"A\":{\"Keys\":[]},\"B\":{\"Keys\":[],\"ConsistentRead\":false}}}", true},
		{"BatchGetItem", "{\"RequestItems\":{\"A\":{\"Keys\":[]},\"B\":{\"Keys\":[],\"ConsistentRead\":true}}}", false},
		{"BatchGetItem", "{\"RequestItems\":[]}", false},
		{"ExecuteStatement", "{\"Statement\":\"SELECT * FROM T\"}", true},
		{"ExecuteStatement", "{\"Statement\":\"\\n  select*from T\",\"ConsistentRead\":false}", true},
		{"ExecuteStatement", "{\"Statement\":\"SELECT * FROM T\",\"ConsistentRead\":true}", false},
		{"ExecuteStatement", "{\"Statement\":\"UPDATE T SET a = 1 WHERE k = 'a'\"}", false},
		{"ExecuteStatement", "{\"Statement\":\"SELECTED\"}", false},
		{"ExecuteStatement", "{\"Statement\":\"\\u0053ELECT 1\"}", false},
		{"ExecuteStatement", "{\"Parameters\":[]}", false},
		{"BatchExecuteStatement", "{\"Statements\":[{\"Statement\":\"SELECT * FROM T\"},{\"Statement\":\"select * from U\"}]}", true},
		{"BatchExecuteStatement", "{\"Statements\":[{\"Statement\":\"SELECT * FROM T\"},{\"Statement\":\"DELETE FROM T WHERE k = 1\"}]}", false},
		{"BatchExecuteStatement", "{\"Statements\":[{\"Statement\":\"SELECT * FROM T\",\"ConsistentRead\":true}]}", false},
		{"TransactGetItems", "{\"TransactItems\":[]}", false},
		{"ExecuteTransaction", "{\"TransactStatements\":[{\"Statement\":\"SELECT * FROM T\"}]}", false},
		{"PutItem", "{\"TableName\":\"T\"}", false},
		{"DescribeTable", "{\"TableName\":\"T\"}", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(gw_eventual_read(cases[i].op, cases[i].body) == cases[i].eventual,
			  "%s %s: eventual %d expected", cases[i].op, cases[i].body, cases[i].eventual);
	CHECK(gw_parse_duration("1s") == 1.0 && gw_parse_duration("500ms") == 0.5 &&
		  gw_parse_duration("2.5") == 2.5 && gw_parse_duration("1min") == 60.0 &&
		  gw_parse_duration("0") == 0.0, "durations");
	CHECK(gw_parse_duration("") < 0 && gw_parse_duration("1h") < 0 && gw_parse_duration("-1s") < 0 &&
		  gw_parse_duration("s") < 0 && gw_parse_duration("nan") < 0, "invalid durations");
}

int
gw_self_test(void)
{
	test_sigv4_vector();
	test_sigv4_checks();
	test_json_compact();
	test_json_valid();
	test_error_mapping();
	test_request_id();
	test_accept_encoding();
	test_gunzip();
	test_eventual_read();
	printf("dynindex-gateway self-test: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
