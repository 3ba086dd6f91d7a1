/*
 * tests/unit/broker/check_nsbuild.c: the NodeSet importer's insertion
 * into the node store (broker/nsbuild.c) through the whole address-space
 * build (tests/unit/broker/nodeset_fixture.h): references across files
 * and written at both ends, unknown reference types and targets, unknown
 * DataTypes and values that do not match theirs, duplicate NodeIds.
 */
#include "nodeset_fixture.h"

START_TEST(test_references)
{
    /* a.xml points at b.xml's node (a later file) and at a node later in
     * its own file; b.xml lists a reference at both ends. */
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:Top\"><References>"
        "<Reference ReferenceType=\"i=35\" IsForward=\"false\">i=85"
        "</Reference><Reference ReferenceType=\"i=40\">i=61</Reference>"
        "<Reference ReferenceType=\"i=47\">ns=1;i=2</Reference>"
        "<Reference ReferenceType=\"i=35\">ns=1;s=InB</Reference>"
        "</References></UAObject>\n"
        "<UAVariable NodeId=\"ns=1;i=2\" BrowseName=\"1:Later\">"
        "<References><Reference ReferenceType=\"i=40\">i=63</Reference>"
        "</References></UAVariable>\n" TAIL);
    const char *b = put("b.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;s=InB\" BrowseName=\"1:InB\"><References>"
        "<Reference ReferenceType=\"i=35\" IsForward=\"false\">ns=1;i=1"
        "</Reference><Reference ReferenceType=\"i=47\">ns=1;s=Child"
        "</Reference></References></UAObject>\n"
        "<UAObject NodeId=\"ns=1;s=Child\" BrowseName=\"1:Child\"><References>"
        "<Reference ReferenceType=\"i=47\" IsForward=\"false\">ns=1;s=InB"
        "</Reference></References></UAObject>\n" TAIL);
    char     paths[300];
    uint32_t top, later, inb, child;

    snprintf(paths, sizeof(paths), "%s %s", a, b);
    build_ok(paths);
    top = lookup_num(2, 1);
    later = lookup_num(2, 2);
    inb = lookup_str(2, "InB");
    child = lookup_str(2, "Child");
    ck_assert_int_eq(has_ref(lookup_num(0, 85), lookup_num(0, 35), top), 1);
    ck_assert_uint_eq(node(top)->type_def, lookup_num(0, 61));
    ck_assert_uint_eq(node(later)->type_def, lookup_num(0, 63));
    ck_assert_int_eq(has_ref(top, lookup_num(0, 47), later), 1);
    /* Written at both ends (a.xml forward, b.xml inverse): one. */
    ck_assert_int_eq(has_ref(top, lookup_num(0, 35), inb), 1);
    ck_assert_int_eq(has_ref(inb, lookup_num(0, 47), child), 1);
    ck_assert_uint_eq(node(child)->nrefs, 1);
    ck_assert_uint_eq(node(top)->nrefs, 4);
}
END_TEST

START_TEST(test_error_references)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\">\n<References>\n"
        "<Reference ReferenceType=\"i=35\">ns=1;i=404</Reference>\n"
        "</References></UAObject>\n" TAIL);
    const char *b = put("b.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\">\n<References>\n"
        "<Reference ReferenceType=\"i=35\">i=85</Reference>\n"
        "<Reference ReferenceType=\"i=58\">i=85</Reference>\n"
        "</References></UAObject>\n" TAIL);
    const char *c = put("c.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\">\n<References>\n"
        "<Reference ReferenceType=\"ns=1;i=77\">i=85</Reference>\n"
        "</References></UAObject>\n" TAIL);

    build_fails(a, a, 6, "unknown reference target ns=2;i=404");
    build_fails(b, b, 7, "unknown reference type ns=0;i=58");
    build_fails(c, c, 6, "unknown reference type ns=2;i=77");
}
END_TEST

/* Unknown DataTypes, values that do not match their DataType. */
START_TEST(test_error_datatype_and_value)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "\n<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:A\"\n"
        " DataType=\"ns=1;i=99\"/>\n" TAIL);
    const char *b = put("b.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:A\" DataType=\"i=85\""
        "/>\n" TAIL);
    const char *c = put("c.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:A\" DataType=\"i=11\">"
        "\n<Value>\n<uax:String>x</uax:String></Value></UAVariable>\n" TAIL);
    const char *f = put("f.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:A\" DataType=\"i=7\">"
        "<Value>\n<uax:ListOfInt32><uax:Int32>1</uax:Int32></uax:ListOfInt32>"
        "</Value></UAVariable>\n" TAIL);
    const char *g = put("g.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:A\" DataType=\"i=12\">"
        "<Value>\n<uax:ExtensionObject><uax:TypeId><uax:Identifier>ns=1;i=5"
        "</uax:Identifier></uax:TypeId><uax:Body><uax:Foo/></uax:Body>"
        "</uax:ExtensionObject></Value></UAVariable>\n" TAIL);

    build_fails(a, a, 6, "unknown DataType ns=2;i=99");
    build_fails(b, b, 4, "unknown DataType ns=0;i=85");
    build_fails(c, c, 6, "a String value does not match the DataType "
                "ns=0;i=11");
    build_fails(f, f, 5, "a Int32 value does not match");
    build_fails(g, g, 5, "a ExtensionObject value does not match the "
                "DataType ns=0;i=12");
}
END_TEST

START_TEST(test_error_duplicates)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\"/>\n"
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:B\"/>\n" TAIL);
    const char *b1 = put("b1.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;s=X\" BrowseName=\"1:A\"/>\n" TAIL);
    const char *b2 = put("b2.xml", HEAD("<Uri>" URI_B "</Uri><Uri>" URI_A
                                        "</Uri>")
        "\n<UAObject NodeId=\"ns=2;s=X\" BrowseName=\"1:A\"/>\n" TAIL);
    const char *c = put("c.xml", HEAD("")
        "<UAObject NodeId=\"i=85\" BrowseName=\"Objects\"/>\n" TAIL);
    const char *d = put("d.xml", HEAD("<Uri>" APP_URI "</Uri>")
        "<UAObject NodeId=\"ns=1;s=Demo\" BrowseName=\"1:Demo\"/>\n" TAIL);
    char        paths[300], want[200];

    build_fails(a, a, 5, "duplicate NodeId ns=2;i=1");
    snprintf(paths, sizeof(paths), "%s %s", b1, b2);
    snprintf(want, sizeof(want), "duplicate NodeId ns=2;s=X (first at %s:4)",
             b1);
    build_fails(paths, b2, 5, want);
    build_fails(c, c, 4, "duplicate NodeId ns=0;i=85 (a node of the "
                "server's own)");
    build_fails(d, d, 4, "duplicate NodeId ns=1;s=Demo");
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("NodeSet insertion");
    SRunner *sr;
    int      failed;
    const struct {
        const char  *name;
        const TTest *t;
    } cases[] = {
        { "References", test_references },
        { "Unknown references", test_error_references },
        { "DataType and value errors", test_error_datatype_and_value },
        { "Duplicate NodeIds", test_error_duplicates },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TCase *tc = tcase_create(cases[i].name);

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cases[i].t);
        suite_add_tcase(s, tc);
    }
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
