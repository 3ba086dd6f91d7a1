/*
 * tests/unit/broker/check_nodeset.c: the NodeSet2 importer's XML walk
 * (broker/nodeset.c) through the whole address-space build
 * (tests/unit/broker/nodeset_fixture.h): namespace mapping, aliases,
 * every node class, values of each supported type, errors of the files
 * with their line, hostile XML, the node limit, and addrspace.nodesets
 * paths beside the config file.
 */
#include "nodeset_fixture.h"

/* ------------------------------------------------------------ tests */

START_TEST(test_namespaces)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri><Uri>" URI_B
                                      "</Uri>")
        "<UAObject NodeId=\"ns=1;i=10\" BrowseName=\"1:InA\">"
        "<References><Reference ReferenceType=\"i=35\" IsForward=\"false\">"
        "i=85</Reference></References></UAObject>\n"
        "<UAObject NodeId=\"ns=2;s=B.from.A\" BrowseName=\"2:BfromA\">"
        "<References><Reference ReferenceType=\"i=35\" IsForward=\"false\">"
        "ns=1;i=10</Reference></References></UAObject>\n" TAIL);
    /* B names B's URI first and this server's own URI (index 1) too. */
    const char *b = put("b.xml", HEAD("<Uri>" URI_B "</Uri><Uri>" URI_C
                                      "</Uri><Uri>" APP_URI "</Uri>")
        "<UAObject NodeId=\"ns=1;i=20\" BrowseName=\"1:InB\">"
        "<References><Reference ReferenceType=\"i=35\" IsForward=\"false\">"
        "ns=1;s=B.from.A</Reference></References></UAObject>\n"
        "<UAObject NodeId=\"ns=2;i=30\" BrowseName=\"2:InC\">"
        "<References><Reference ReferenceType=\"i=35\" IsForward=\"false\">"
        "ns=1;i=20</Reference></References></UAObject>\n"
        "<UAObject NodeId=\"ns=3;s=Mine\" BrowseName=\"3:Mine\">"
        "<References><Reference ReferenceType=\"i=35\" IsForward=\"false\">"
        "ns=3;s=Demo</Reference></References></UAObject>\n" TAIL);
    char              paths[300];
    struct ua_variant v;
    struct ua_string *u;

    snprintf(paths, sizeof(paths), "%s %s", a, b);
    build_ok(paths);
    /* Server: 0 UA, 1 this server, 2 A, 3 B, 4 C. */
    value_of(lookup_num(0, UA_NS0ID_SERVER_NAMESPACEARRAY), &v);
    ck_assert_int_eq(v.type, UA_BT_STRING);
    ck_assert_int_eq(v.n, 5);
    u = v.data;
    ck_assert(ustr_is(&u[0], "http://opcfoundation.org/UA/"));
    ck_assert(ustr_is(&u[1], APP_URI));
    ck_assert(ustr_is(&u[2], URI_A));
    ck_assert(ustr_is(&u[3], URI_B));
    ck_assert(ustr_is(&u[4], URI_C));
    ck_assert_uint_eq(node(lookup_num(2, 10))->browse_ns, 2);
    ck_assert_uint_eq(node(lookup_str(3, "B.from.A"))->browse_ns, 3);
    ck_assert_uint_eq(node(lookup_num(3, 20))->browse_ns, 3);
    ck_assert_uint_eq(node(lookup_num(4, 30))->browse_ns, 4);
    ck_assert_uint_eq(node(lookup_str(1, "Mine"))->browse_ns, 1);
    ck_assert(str_is(node(lookup_num(4, 30))->browse_name, "InC"));
    /* References translated through each file's own table. */
    ck_assert_int_eq(has_ref(lookup_num(2, 10), lookup_num(0, 35),
                             lookup_str(3, "B.from.A")), 1);
    ck_assert_int_eq(has_ref(lookup_str(3, "B.from.A"), lookup_num(0, 35),
                             lookup_num(3, 20)), 1);
    ck_assert_int_eq(has_ref(lookup_str(1, "Demo"), lookup_num(0, 35),
                             lookup_str(1, "Mine")), 1);
    /* Nothing in a file may use an index its table does not have. */
    bk_addrspace_close(&as);
    built = false;
    a = put("c.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=10\"\n BrowseName=\"2:X\"/>\n" TAIL);
    /* A start tag over several lines: the line it ends on. */
    build_fails(a, a, 5, "namespace index 2 is not in the file's "
                "NamespaceUris");
}
END_TEST

START_TEST(test_aliases)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<Aliases><Alias Alias=\"Dbl\">i=11</Alias>"
        "<Alias Alias=\"Org\">i=35</Alias>"
        "<Alias Alias=\"Objects\">i=85</Alias>"
        "<Alias Alias=\"MyType\">ns=1;i=100</Alias></Aliases>\n"
        "<UAObjectType NodeId=\"MyType\" BrowseName=\"1:MyType\">"
        "<References><Reference ReferenceType=\"i=45\" IsForward=\"false\">"
        "i=58</Reference></References></UAObjectType>\n"
        "<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:V\" DataType=\"Dbl\">"
        "<References><Reference ReferenceType=\"Org\" IsForward=\"false\">"
        "Objects</Reference><Reference ReferenceType=\"i=40\">MyType"
        "</Reference></References></UAVariable>\n" TAIL);
    const char *bad = put("bad.xml", HEAD("")
        "<Aliases><Alias Alias=\"Dbl\">i=11</Alias></Aliases>\n"
        "<UAVariable NodeId=\"ns=0;i=99999\" BrowseName=\"V\"\n"
        "  DataType=\"Float\"/>\n" TAIL);
    uint32_t v;

    build_ok(a);
    v = lookup_num(2, 1);
    ck_assert_uint_eq(node(v)->u.var.data_type, lookup_num(0, 11));
    ck_assert_int_eq(has_ref(lookup_num(0, 85), lookup_num(0, 35), v), 1);
    ck_assert_uint_eq(node(v)->type_def, lookup_num(2, 100));
    bk_addrspace_close(&as);
    built = false;
    /* Aliases belong to their file; an unknown one is an error. */
    build_fails(bad, bad, 6, "unknown alias \"Float\"");
}
END_TEST

START_TEST(test_node_classes)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:Obj\" EventNotifier=\"5\""
        " WriteMask=\"64\" UserWriteMask=\"0\">"
        "<DisplayName Locale=\"de\">Objekt</DisplayName>"
        "<Description Locale=\"en\">An object.</Description></UAObject>\n"
        "<UAVariable NodeId=\"ns=1;i=2\" BrowseName=\"1:Var\" DataType=\"i=6\""
        " ValueRank=\"2\" ArrayDimensions=\"2,3\" AccessLevel=\"7\""
        " UserAccessLevel=\"3\" MinimumSamplingInterval=\"250\""
        " Historizing=\"true\"/>\n"
        "<UAVariable NodeId=\"ns=1;i=3\" BrowseName=\"1:Default\"/>\n"
        "<UAMethod NodeId=\"ns=1;i=4\" BrowseName=\"1:M\"/>\n"
        "<UAMethod NodeId=\"ns=1;i=5\" BrowseName=\"1:M2\" Executable=\"false\""
        " UserExecutable=\"false\"/>\n"
        "<UAObjectType NodeId=\"ns=1;i=6\" BrowseName=\"1:OT\""
        " IsAbstract=\"true\"><References><Reference ReferenceType=\"i=45\""
        " IsForward=\"false\">i=58</Reference></References></UAObjectType>\n"
        "<UAVariableType NodeId=\"ns=1;i=7\" BrowseName=\"1:VT\""
        " DataType=\"i=11\" ValueRank=\"-2\"><References><Reference"
        " ReferenceType=\"i=45\" IsForward=\"false\">i=63</Reference>"
        "</References><Value><uax:Double>2.5</uax:Double></Value>"
        "</UAVariableType>\n"
        "<UADataType NodeId=\"ns=1;i=8\" BrowseName=\"1:DT\">"
        "<References><Reference ReferenceType=\"i=45\" IsForward=\"false\">"
        "i=6</Reference></References><Definition Name=\"DT\"/></UADataType>\n"
        "<UAReferenceType NodeId=\"ns=1;i=9\" BrowseName=\"1:RT\""
        " Symmetric=\"false\"><InverseName Locale=\"en\">IsRTOf</InverseName>"
        "<References><Reference ReferenceType=\"i=45\" IsForward=\"false\">"
        "i=33</Reference></References></UAReferenceType>\n"
        "<UAReferenceType NodeId=\"ns=1;i=10\" BrowseName=\"1:Sym\""
        " Symmetric=\"true\" IsAbstract=\"true\"><References><Reference"
        " ReferenceType=\"i=45\" IsForward=\"false\">i=32</Reference>"
        "</References></UAReferenceType>\n"
        "<UAView NodeId=\"ns=1;i=11\" BrowseName=\"1:View\""
        " ContainsNoLoops=\"true\" EventNotifier=\"1\"/>\n"
        "<UAVariable NodeId=\"ns=1;i=12\" BrowseName=\"1:OfDT\""
        " DataType=\"ns=1;i=8\"><Value><uax:Int32>3</uax:Int32></Value>"
        "</UAVariable>\n"
        "<UAVariable NodeId=\"ns=1;i=14\" BrowseName=\"1:RW\""
        " AccessLevel=\"3\" WriteMask=\"4\"/>\n"
        "<UAObject NodeId=\"ns=1;i=13\" BrowseName=\"1:Linked\"><References>"
        "<Reference ReferenceType=\"ns=1;i=9\">ns=1;i=1</Reference>"
        "</References></UAObject>\n" TAIL);
    const struct shm_node *n;
    const uint32_t        *dims;
    uint32_t               len;

    build_ok(a);
    n = node(lookup_num(2, 1));
    ck_assert_uint_eq(n->node_class, SHM_NC_OBJECT);
    ck_assert_uint_eq(n->event_notifier, 5);
    ck_assert_uint_eq(n->write_mask, 64);
    ck_assert_uint_eq(n->user_write_mask, 0);
    ck_assert(str_is(n->browse_name, "Obj"));
    ck_assert(str_is(n->dn_text, "Objekt"));
    ck_assert(str_is(n->dn_locale, "de"));
    ck_assert(str_is(n->desc_text, "An object."));
    ck_assert(str_is(n->desc_locale, "en"));
    n = node(lookup_num(2, 2));
    ck_assert_uint_eq(n->node_class, SHM_NC_VARIABLE);
    ck_assert_uint_eq(n->u.var.data_type, lookup_num(0, 6));
    ck_assert_int_eq(n->u.var.value_rank, 2);
    dims = (const uint32_t *)(const void *)shm_nodestore_string(
        &as.ns, n->u.var.array_dims, &len);
    ck_assert_ptr_nonnull(dims);
    ck_assert_uint_eq(len, 12);     /* { n, dims[n] } */
    ck_assert_uint_eq(dims[0], 2);
    ck_assert_uint_eq(dims[1], 2);
    ck_assert_uint_eq(dims[2], 3);
    /* The file's AccessLevel 7 and UserAccessLevel 3; Historizing adds
     * HistoryRead and HistoryWrite to both (broker/histconf.c). */
    ck_assert_uint_eq(n->access_level_ex, 7 | 0x08);
    ck_assert_uint_eq(n->user_access_level, 3 | 0x0C);
    ck_assert(n->min_sampling == 250.0);
    ck_assert(n->flags & SHM_NF_HISTORIZING);
    /* Defaults: BaseDataType, scalar, CurrentRead, DisplayName = name. */
    n = node(lookup_num(2, 3));
    ck_assert_uint_eq(n->u.var.data_type, lookup_num(0, 24));
    ck_assert_int_eq(n->u.var.value_rank, -1);
    ck_assert_uint_eq(n->u.var.array_dims, 0);
    ck_assert_uint_eq(n->access_level_ex, 1);
    ck_assert_uint_eq(n->user_access_level, 1);
    ck_assert(str_is(n->dn_text, "Default"));
    ck_assert(str_is(n->desc_text, NULL));
    ck_assert(!(n->flags & SHM_NF_HISTORIZING));
    n = node(lookup_num(2, 4));
    ck_assert_uint_eq(n->node_class, SHM_NC_METHOD);
    ck_assert_uint_eq(n->flags & (SHM_NF_EXECUTABLE | SHM_NF_USER_EXECUTABLE),
                      SHM_NF_EXECUTABLE | SHM_NF_USER_EXECUTABLE);
    n = node(lookup_num(2, 5));
    ck_assert_uint_eq(n->flags & (SHM_NF_EXECUTABLE | SHM_NF_USER_EXECUTABLE),
                      0);
    n = node(lookup_num(2, 6));
    ck_assert_uint_eq(n->node_class, SHM_NC_OBJECTTYPE);
    ck_assert(n->flags & SHM_NF_ABSTRACT);
    ck_assert_uint_eq(n->super, lookup_num(0, 58));
    n = node(lookup_num(2, 7));
    ck_assert_uint_eq(n->node_class, SHM_NC_VARIABLETYPE);
    ck_assert_int_eq(n->u.var.value_rank, -2);
    ck_assert(!(n->flags & SHM_NF_ABSTRACT));
    n = node(lookup_num(2, 8));
    ck_assert_uint_eq(n->node_class, SHM_NC_DATATYPE);
    ck_assert_uint_eq(n->super, lookup_num(0, 6));
    n = node(lookup_num(2, 9));
    ck_assert_uint_eq(n->node_class, SHM_NC_REFERENCETYPE);
    ck_assert(str_is(n->u.ref.inv_text, "IsRTOf"));
    ck_assert(str_is(n->u.ref.inv_locale, "en"));
    ck_assert(!(n->flags & SHM_NF_SYMMETRIC));
    /* A new reference type is a subtype of its ns0 ancestors. */
    ck_assert(shm_nodestore_reftype_is(&as.ns, n->u.ref.reftype,
                                       node(lookup_num(0, 33))->u.ref.reftype));
    ck_assert(shm_nodestore_reftype_is(&as.ns, n->u.ref.reftype,
                                       node(lookup_num(0, 31))->u.ref.reftype));
    n = node(lookup_num(2, 10));
    ck_assert(n->flags & SHM_NF_SYMMETRIC);
    ck_assert(n->flags & SHM_NF_ABSTRACT);
    n = node(lookup_num(2, 11));
    ck_assert_uint_eq(n->node_class, SHM_NC_VIEW);
    ck_assert(n->flags & SHM_NF_CONTAINS_NO_LOOPS);
    ck_assert_uint_eq(n->event_notifier, 1);
    /* UserAccessLevel and UserWriteMask absent: the node's own. */
    n = node(lookup_num(2, 14));
    ck_assert_uint_eq(n->access_level_ex, 3);
    ck_assert_uint_eq(n->user_access_level, 3);
    ck_assert_uint_eq(n->write_mask, 4);
    ck_assert_uint_eq(n->user_write_mask, 4);
    /* A value of a DataType the file defines (Int32 underneath). */
    n = node(lookup_num(2, 12));
    ck_assert_uint_eq(n->u.var.data_type, lookup_num(2, 8));
    ck_assert_int_eq(has_ref(lookup_num(2, 13), lookup_num(2, 9),
                             lookup_num(2, 1)), 1);
}
END_TEST

/* One variable per value; (id, DataType, Value XML). */
#define VAR(id, dt, val)                                                    \
    "<UAVariable NodeId=\"ns=1;i=" #id "\" BrowseName=\"1:v" #id "\""       \
    " DataType=\"" dt "\" ValueRank=\"-2\"><Value>" val "</Value>"           \
    "</UAVariable>\n"

START_TEST(test_values_scalar)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        VAR(1, "i=1", "<uax:Boolean>true</uax:Boolean>")
        VAR(2, "i=2", "<uax:SByte>-128</uax:SByte>")
        VAR(3, "i=3", "<uax:Byte>255</uax:Byte>")
        VAR(4, "i=4", "<uax:Int16>-32768</uax:Int16>")
        VAR(5, "i=5", "<uax:UInt16>65535</uax:UInt16>")
        VAR(6, "i=6", "<uax:Int32>-2147483648</uax:Int32>")
        VAR(7, "i=7", "<uax:UInt32>4294967295</uax:UInt32>")
        VAR(8, "i=8", "<uax:Int64>-9223372036854775808</uax:Int64>")
        VAR(9, "i=9", "<uax:UInt64>18446744073709551615</uax:UInt64>")
        VAR(10, "i=10", "<uax:Float>1.5</uax:Float>")
        VAR(11, "i=11", "<uax:Double>-2.25e3</uax:Double>")
        VAR(12, "i=12", "<uax:String>h\xC3\xA9llo &amp; &lt;x&gt;</uax:String>")
        VAR(13, "i=13", "<uax:DateTime>2023-12-15T00:00:01.5Z</uax:DateTime>")
        VAR(14, "i=14", "<uax:Guid><uax:String>"
            "72962B91-FA75-4AE6-8D28-B404DC7DAF63</uax:String></uax:Guid>")
        VAR(15, "i=15", "<uax:ByteString>AAEC/w==</uax:ByteString>")
        VAR(16, "i=16", "<uax:XmlElement><a x=\"1\">t</a></uax:XmlElement>")
        VAR(17, "i=17", "<uax:NodeId><uax:Identifier>ns=1;s=Q</uax:Identifier>"
            "</uax:NodeId>")
        VAR(18, "i=18", "<uax:ExpandedNodeId><uax:Identifier>i=85"
            "</uax:Identifier></uax:ExpandedNodeId>")
        VAR(19, "i=19", "<uax:StatusCode><uax:Code>2155085824</uax:Code>"
            "</uax:StatusCode>")
        VAR(20, "i=20", "<uax:QualifiedName><uax:NamespaceIndex>1"
            "</uax:NamespaceIndex><uax:Name>QN</uax:Name></uax:QualifiedName>")
        VAR(21, "i=21", "<uax:LocalizedText><uax:Locale>fr</uax:Locale>"
            "<uax:Text>Bonjour</uax:Text></uax:LocalizedText>")
        VAR(22, "i=290", "<uax:Double>100</uax:Double>")
        VAR(23, "i=26", "<uax:UInt16>7</uax:UInt16>")
        VAR(24, "i=852", "<uax:Int32>0</uax:Int32>")
        VAR(25, "i=24", "<uax:String>any</uax:String>")
        "<UAVariable NodeId=\"ns=1;i=26\" BrowseName=\"1:NoValue\""
        " DataType=\"i=11\"/>\n"
        VAR(27, "i=884", "<uax:ExtensionObject><uax:TypeId><uax:Identifier>"
            "i=885</uax:Identifier></uax:TypeId><uax:Body><uax:Range>"
            "<uax:Low>-1.5</uax:Low><uax:High>99</uax:High></uax:Range>"
            "</uax:Body></uax:ExtensionObject>")
        VAR(28, "i=887", "<uax:ExtensionObject><uax:TypeId><uax:Identifier>"
            "i=888</uax:Identifier></uax:TypeId><uax:Body><uax:EUInformation>"
            "<uax:NamespaceUri>http://www.opcfoundation.org/UA/units/un/cefact"
            "</uax:NamespaceUri><uax:UnitId>4408652</uax:UnitId>"
            "<uax:DisplayName><uax:Locale>en</uax:Locale><uax:Text>\xC2\xB0"
            "C</uax:Text></uax:DisplayName><uax:Description><uax:Text>degree"
            " Celsius</uax:Text></uax:Description></uax:EUInformation>"
            "</uax:Body></uax:ExtensionObject>")
        TAIL);
    struct ua_variant v;
    const uint8_t     guid4[8] = { 0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D, 0xAF,
                                   0x63 };

    build_ok(a);
#define SCALAR(id, bt)                                                      \
    do {                                                                   \
        value_of(lookup_num(2, id), &v);                                   \
        ck_assert_int_eq(v.type, bt);                                      \
        ck_assert_int_eq(v.is_array, 0);                                   \
    } while (0)
    SCALAR(1, UA_BT_BOOLEAN);
    ck_assert(*(bool *)v.data);
    SCALAR(2, UA_BT_SBYTE);
    ck_assert_int_eq(*(int8_t *)v.data, -128);
    SCALAR(3, UA_BT_BYTE);
    ck_assert_uint_eq(*(uint8_t *)v.data, 255);
    SCALAR(4, UA_BT_INT16);
    ck_assert_int_eq(*(int16_t *)v.data, -32768);
    SCALAR(5, UA_BT_UINT16);
    ck_assert_uint_eq(*(uint16_t *)v.data, 65535);
    SCALAR(6, UA_BT_INT32);
    ck_assert_int_eq(*(int32_t *)v.data, INT32_MIN);
    SCALAR(7, UA_BT_UINT32);
    ck_assert_uint_eq(*(uint32_t *)v.data, UINT32_MAX);
    SCALAR(8, UA_BT_INT64);
    ck_assert(*(int64_t *)v.data == INT64_MIN);
    SCALAR(9, UA_BT_UINT64);
    ck_assert(*(uint64_t *)v.data == UINT64_MAX);
    SCALAR(10, UA_BT_FLOAT);
    ck_assert(*(float *)v.data == 1.5f);
    SCALAR(11, UA_BT_DOUBLE);
    ck_assert(*(double *)v.data == -2250.0);
    SCALAR(12, UA_BT_STRING);
    ck_assert(ustr_is(v.data, "h\xC3\xA9llo & <x>"));
    SCALAR(13, UA_BT_DATETIME);
    ck_assert(*(int64_t *)v.data == T0 + 15000000);
    SCALAR(14, UA_BT_GUID);
    ck_assert_uint_eq(((struct ua_guid *)v.data)->data1, 0x72962B91);
    ck_assert_uint_eq(((struct ua_guid *)v.data)->data2, 0xFA75);
    ck_assert_uint_eq(((struct ua_guid *)v.data)->data3, 0x4AE6);
    ck_assert_mem_eq(((struct ua_guid *)v.data)->data4, guid4, 8);
    SCALAR(15, UA_BT_BYTESTRING);
    ck_assert_int_eq(((struct ua_string *)v.data)->len, 4);
    ck_assert_mem_eq(((struct ua_string *)v.data)->data, "\x00\x01\x02\xff",
                     4);
    SCALAR(16, UA_BT_XMLELEMENT);
    ck_assert(strstr((char *)((struct ua_string *)v.data)->data, "<a") != 0);
    SCALAR(17, UA_BT_NODEID);
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)->ns, 2);
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)->idtype, UA_IDTYPE_STRING);
    ck_assert(ustr_is(&((struct ua_nodeid *)v.data)->id.str, "Q"));
    SCALAR(18, UA_BT_EXPANDEDNODEID);
    ck_assert_uint_eq(((struct ua_expandednodeid *)v.data)->node.id.num, 85);
    SCALAR(19, UA_BT_STATUSCODE);
    ck_assert_uint_eq(*(uint32_t *)v.data, 0x80740000u);
    SCALAR(20, UA_BT_QUALIFIEDNAME);
    ck_assert_uint_eq(((struct ua_qualifiedname *)v.data)->ns, 2);
    ck_assert(ustr_is(&((struct ua_qualifiedname *)v.data)->name, "QN"));
    SCALAR(21, UA_BT_LOCALIZEDTEXT);
    ck_assert(ustr_is(&((struct ua_localizedtext *)v.data)->locale, "fr"));
    ck_assert(ustr_is(&((struct ua_localizedtext *)v.data)->text, "Bonjour"));
    SCALAR(22, UA_BT_DOUBLE);           /* Duration */
    SCALAR(23, UA_BT_UINT16);           /* Number */
    SCALAR(24, UA_BT_INT32);            /* ServerState, an enumeration */
    SCALAR(25, UA_BT_STRING);           /* BaseDataType */
    /* No Value: a null Variant, as ns0 variables without one. */
    value_of(lookup_num(2, 26), &v);
    ck_assert_int_eq(v.type, 0);
    SCALAR(27, UA_BT_EXTENSIONOBJECT);
    {
        struct ua_extobj *x = v.data;
        struct ua_range  *r;

        ck_assert_int_eq(x->encoding, UA_EO_DECODED);
        ck_assert_ptr_eq(x->type, &ua_types[UA_TYPE_RANGE]);
        r = x->obj;
        ck_assert(r->low == -1.5 && r->high == 99.0);
    }
    SCALAR(28, UA_BT_EXTENSIONOBJECT);
    {
        struct ua_extobj         *x = v.data;
        struct ua_eu_information *eu;

        ck_assert_ptr_eq(x->type, &ua_types[UA_TYPE_EUINFORMATION]);
        eu = x->obj;
        ck_assert_int_eq(eu->unit_id, 4408652);
        ck_assert(ustr_is(&eu->display_name.text, "\xC2\xB0" "C"));
        ck_assert(ustr_is(&eu->description.text, "degree Celsius"));
        ck_assert_uint_eq(eu->description.mask, UA_LT_TEXT);
    }
#undef SCALAR
}
END_TEST

START_TEST(test_values_arrays)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        VAR(1, "i=1", "<uax:ListOfBoolean><uax:Boolean>true</uax:Boolean>"
            "<uax:Boolean>false</uax:Boolean></uax:ListOfBoolean>")
        VAR(2, "i=3", "<uax:ListOfByte><uax:Byte>1</uax:Byte><uax:Byte>2"
            "</uax:Byte><uax:Byte>3</uax:Byte></uax:ListOfByte>")
        VAR(3, "i=6", "<uax:ListOfInt32/>")
        VAR(4, "i=9", "<uax:ListOfUInt64><uax:UInt64>5</uax:UInt64>"
            "</uax:ListOfUInt64>")
        VAR(5, "i=11", "<uax:ListOfDouble><uax:Double>0.5</uax:Double>"
            "<uax:Double>INF</uax:Double></uax:ListOfDouble>")
        VAR(6, "i=12", "<uax:ListOfString><uax:String>a</uax:String>"
            "<uax:String></uax:String><uax:String>c</uax:String>"
            "</uax:ListOfString>")
        VAR(7, "i=21", "<uax:ListOfLocalizedText><uax:LocalizedText>"
            "<uax:Text>x</uax:Text></uax:LocalizedText></uax:ListOfLocalizedText>")
        VAR(8, "i=17", "<uax:ListOfNodeId><uax:NodeId><uax:Identifier>i=1"
            "</uax:Identifier></uax:NodeId><uax:NodeId><uax:Identifier>"
            "ns=1;g=72962B91-FA75-4AE6-8D28-B404DC7DAF63</uax:Identifier>"
            "</uax:NodeId></uax:ListOfNodeId>")
        VAR(9, "i=296", "<uax:ListOfExtensionObject><uax:ExtensionObject>"
            "<uax:TypeId><uax:Identifier>i=297</uax:Identifier></uax:TypeId>"
            "<uax:Body><uax:Argument><uax:Name>Speed</uax:Name><uax:DataType>"
            "<uax:Identifier>i=11</uax:Identifier></uax:DataType>"
            "<uax:ValueRank>1</uax:ValueRank><uax:ArrayDimensions><uax:UInt32>"
            "4</uax:UInt32></uax:ArrayDimensions><uax:Description><uax:Locale>"
            "en</uax:Locale><uax:Text>Target</uax:Text></uax:Description>"
            "</uax:Argument></uax:Body></uax:ExtensionObject>"
            "<uax:ExtensionObject><uax:TypeId><uax:Identifier>i=297"
            "</uax:Identifier></uax:TypeId><uax:Body><uax:Argument><uax:Name>"
            "Mode</uax:Name><uax:DataType><uax:Identifier>ns=1;i=3000"
            "</uax:Identifier></uax:DataType><uax:ValueRank>-1</uax:ValueRank>"
            "</uax:Argument></uax:Body></uax:ExtensionObject>"
            "</uax:ListOfExtensionObject>")
        VAR(10, "i=13", "<uax:ListOfDateTime><uax:DateTime>"
            "2023-12-15T01:00:00+01:00</uax:DateTime></uax:ListOfDateTime>")
        VAR(11, "i=20", "<uax:ListOfQualifiedName><uax:QualifiedName>"
            "<uax:Name>q</uax:Name></uax:QualifiedName>"
            "</uax:ListOfQualifiedName>")
        VAR(12, "i=10", "<uax:ListOfFloat><uax:Float>-0.25</uax:Float>"
            "</uax:ListOfFloat>")
        VAR(13, "i=15", "<uax:ListOfByteString><uax:ByteString>YWJj"
            "</uax:ByteString></uax:ListOfByteString>")
        /* EnumValueType by its XML encoding id (EnumValues). */
        VAR(16, "i=7594", "<uax:ListOfExtensionObject><uax:ExtensionObject>"
            "<uax:TypeId><uax:Identifier>i=7616</uax:Identifier></uax:TypeId>"
            "<uax:Body><uax:EnumValueType><uax:Value>3</uax:Value>"
            "<uax:DisplayName><uax:Text>Three</uax:Text></uax:DisplayName>"
            "</uax:EnumValueType></uax:Body></uax:ExtensionObject>"
            "</uax:ListOfExtensionObject>")
        /* A structure of the model's own: kept as its XML body. */
        VAR(14, "i=22", "<uax:ExtensionObject><uax:TypeId><uax:Identifier>"
            "ns=1;s=MyStruct.Xml</uax:Identifier></uax:TypeId><uax:Body>"
            "<MyStruct xmlns=\"urn:x\"><A>1</A></MyStruct></uax:Body>"
            "</uax:ExtensionObject>")
        VAR(15, "i=17", "<uax:ListOfNodeId><uax:NodeId><uax:Identifier>"
            "ns=1;s=First</uax:Identifier></uax:NodeId><uax:NodeId>"
            "<uax:Identifier>ns=1;s=Second</uax:Identifier></uax:NodeId>"
            "</uax:ListOfNodeId>")
        TAIL);
    struct ua_variant v;

    build_ok(a);
#define ARRAY(id, bt, n_)                                                   \
    do {                                                                   \
        value_of(lookup_num(2, id), &v);                                   \
        ck_assert_int_eq(v.type, bt);                                      \
        ck_assert_int_eq(v.is_array, 1);                                   \
        ck_assert_int_eq(v.n, n_);                                         \
    } while (0)
    ARRAY(1, UA_BT_BOOLEAN, 2);
    ck_assert(((bool *)v.data)[0] && !((bool *)v.data)[1]);
    ARRAY(2, UA_BT_BYTE, 3);
    ck_assert_uint_eq(((uint8_t *)v.data)[2], 3);
    ARRAY(3, UA_BT_INT32, 0);
    ARRAY(4, UA_BT_UINT64, 1);
    ck_assert(((uint64_t *)v.data)[0] == 5);
    ARRAY(5, UA_BT_DOUBLE, 2);
    ck_assert(isinf(((double *)v.data)[1]));
    ARRAY(6, UA_BT_STRING, 3);
    ck_assert(ustr_is(&((struct ua_string *)v.data)[2], "c"));
    ck_assert_int_eq(((struct ua_string *)v.data)[1].len, 0);
    ARRAY(7, UA_BT_LOCALIZEDTEXT, 1);
    ARRAY(8, UA_BT_NODEID, 2);
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)[1].ns, 2);
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)[1].idtype, UA_IDTYPE_GUID);
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)[1].id.guid.data1,
                      0x72962B91);
    /* InputArguments: what Call reads from the value slot. */
    ARRAY(9, UA_BT_EXTENSIONOBJECT, 2);
    {
        struct ua_extobj   *x = v.data;
        struct ua_argument *arg;

        ck_assert_int_eq(x[0].encoding, UA_EO_DECODED);
        ck_assert_uint_eq(x[0].type_id.id.num,
                          UA_NS0ID_ARGUMENT_ENCODING_DEFAULTBINARY);
        ck_assert_ptr_eq(x[0].type, &ua_types[UA_TYPE_ARGUMENT]);
        arg = x[0].obj;
        ck_assert(ustr_is(&arg->name, "Speed"));
        ck_assert_uint_eq(arg->data_type.id.num, UA_NS0ID_DOUBLE);
        ck_assert_int_eq(arg->value_rank, 1);
        ck_assert_int_eq(arg->n_array_dimensions, 1);
        ck_assert_uint_eq(arg->array_dimensions[0], 4);
        ck_assert(ustr_is(&arg->description.locale, "en"));
        ck_assert(ustr_is(&arg->description.text, "Target"));
        arg = x[1].obj;
        ck_assert(ustr_is(&arg->name, "Mode"));
        ck_assert_uint_eq(arg->data_type.ns, 2);    /* translated */
        ck_assert_uint_eq(arg->data_type.id.num, 3000);
        ck_assert_int_eq(arg->value_rank, -1);
        ck_assert_int_le(arg->n_array_dimensions, 0);
        ck_assert_uint_eq(arg->description.mask, 0);
    }
    ARRAY(10, UA_BT_DATETIME, 1);
    ck_assert(((int64_t *)v.data)[0] == T0);
    ARRAY(11, UA_BT_QUALIFIEDNAME, 1);
    ck_assert_uint_eq(((struct ua_qualifiedname *)v.data)[0].ns, 0);
    ARRAY(12, UA_BT_FLOAT, 1);
    ARRAY(13, UA_BT_BYTESTRING, 1);
    ck_assert(ustr_is(&((struct ua_string *)v.data)[0], "abc"));
    value_of(lookup_num(2, 14), &v);
    ck_assert_int_eq(v.type, UA_BT_EXTENSIONOBJECT);
    {
        struct ua_extobj *x = v.data;

        ck_assert_int_eq(x->encoding, UA_EO_XML);
        ck_assert_uint_eq(x->type_id.ns, 2);
        ck_assert(ustr_is(&x->type_id.id.str, "MyStruct.Xml"));
        ck_assert(x->body.len > 0);
        ck_assert_ptr_nonnull(memmem(x->body.data, (size_t)x->body.len,
                                     "<A>1</A>", 8));
    }
    ARRAY(16, UA_BT_EXTENSIONOBJECT, 1);
    {
        struct ua_extobj        *x = v.data;
        struct ua_enum_value_type *e;

        ck_assert_int_eq(x->encoding, UA_EO_DECODED);
        ck_assert_ptr_eq(x->type, &ua_types[UA_TYPE_ENUMVALUETYPE]);
        e = x->obj;
        ck_assert(e->value == 3);
        ck_assert(ustr_is(&e->display_name.text, "Three"));
    }
    ARRAY(15, UA_BT_NODEID, 2);
    ck_assert(ustr_is(&((struct ua_nodeid *)v.data)[0].id.str, "First"));
    ck_assert(ustr_is(&((struct ua_nodeid *)v.data)[1].id.str, "Second"));
#undef ARRAY
}
END_TEST

START_TEST(test_error_bad_xml)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\">\n"
        "</UAVariable>\n" TAIL);
    const char *b = put("b.xml", "<?xml version=\"1.0\"?>\n<Other/>\n");
    const char *c = put("c.xml", HEAD("")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\"/>\n" TAIL);
    const char *d = put("d.xml", HEAD("")
        "<UAObject BrowseName=\"A\"/>\n" TAIL);
    const char *e = put("e.xml", HEAD("")
        "<UAObject NodeId=\"ns=0;x=1\" BrowseName=\"A\"/>\n" TAIL);

    build_fails(a, a, 5, "bad XML");
    build_fails(b, b, 2, "not a NodeSet");
    build_fails(c, c, 4, "namespace index 1");
    build_fails(d, d, 4, "without NodeId");
    build_fails(e, e, 4, "bad NodeId \"ns=0;x=1\"");
    ck_assert_int_eq(build("/nonexistent/x.xml"), -1);
    ck_assert(as.nodeset_failed);
    ck_assert_msg(strstr(err, "/nonexistent/x.xml") != NULL
                  && strstr(err, "cannot open") != NULL, "%s", err);
}
END_TEST

/* Value text that is not of its element's type. */
START_TEST(test_error_value_text)
{
    const char *d = put("d.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:A\" DataType=\"i=3\">"
        "<Value>\n\n<uax:Byte>256</uax:Byte></Value></UAVariable>\n" TAIL);
    const char *e = put("e.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAVariable NodeId=\"ns=1;i=1\" BrowseName=\"1:A\" DataType=\"i=6\">"
        "<Value><uax:ListOfInt32>\n<uax:Int32>1</uax:Int32>\n<uax:Int32>x"
        "</uax:Int32></uax:ListOfInt32></Value></UAVariable>\n" TAIL);

    build_fails(d, d, 6, "\"256\" is not a Byte");
    build_fails(e, e, 6, "\"x\" is not a Int32");
}
END_TEST

START_TEST(test_error_required_model)
{
    const char *di = put("di.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<Models><Model ModelUri=\"" URI_A "\"><RequiredModel ModelUri="
        "\"http://opcfoundation.org/UA/\"/></Model></Models>\n" TAIL);
    const char *user = put("user.xml", HEAD("<Uri>" URI_B "</Uri><Uri>"
                                            URI_A "</Uri>")
        "<Models><Model ModelUri=\"" URI_B "\">\n"
        "<RequiredModel ModelUri=\"" URI_A "\"/></Model></Models>\n" TAIL);
    char        paths[300];

    /* The model it needs after it, or not at all: an error. */
    snprintf(paths, sizeof(paths), "%s %s", user, di);
    build_fails(paths, user, 5, "requires the model " URI_A ": list its "
                "NodeSet file before this one");
    build_fails(user, user, 5, "requires the model");
    snprintf(paths, sizeof(paths), "%s %s", di, user);
    build_ok(paths);
}
END_TEST

START_TEST(test_error_alias)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<Aliases><Alias Alias=\"Org\">i=35</Alias></Aliases>\n"
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\"><References>\n"
        "<Reference ReferenceType=\"HasComponent\">i=85</Reference>\n"
        "</References></UAObject>\n" TAIL);
    const char *b = put("b.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\"><References>\n"
        "<Reference ReferenceType=\"i=35\">\nNoSuchNode</Reference>\n"
        "</References></UAObject>\n" TAIL);

    build_fails(a, a, 6, "unknown alias \"HasComponent\"");
    build_fails(b, b, 5, "unknown alias \"NoSuchNode\"");
}
END_TEST

START_TEST(test_hostile_xml)
{
    /* An external entity (a local file, and the network): refused. */
    const char *a = put("a.xml", "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE UANodeSet [<!ENTITY x SYSTEM \"file:///etc/passwd\">\n"
        "<!ENTITY y SYSTEM \"http://127.0.0.1:9/x\">]>\n"
        "<UANodeSet xmlns=\"http://opcfoundation.org/UA/2011/03/UANodeSet.xsd\">"
        "<UAObject NodeId=\"i=70000\" BrowseName=\"A\"><DisplayName>&x;&y;"
        "</DisplayName></UAObject></UANodeSet>\n");
    /* An internal entity bomb: refused before any expansion. */
    const char *b = put("b.xml", "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE UANodeSet [<!ENTITY a \"aaaaaaaaaaaaaaaa\">\n"
        "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
        "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>\n"
        "<UANodeSet xmlns=\"http://opcfoundation.org/UA/2011/03/UANodeSet.xsd\">"
        "<UAObject NodeId=\"i=70000\" BrowseName=\"A\"><DisplayName>&c;"
        "</DisplayName></UAObject></UANodeSet>\n");
    /* An external DTD: not loaded, refused. */
    const char *c = put("c.xml", "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE UANodeSet SYSTEM \"http://127.0.0.1:9/x.dtd\">\n"
        "<UANodeSet/>\n");
    /* XInclude is not processed: the element is ignored. */
    const char *d = put("d.xml", HEAD("")
        "<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\""
        " href=\"file:///etc/passwd\" parse=\"text\"/>\n" TAIL);

    ck_assert_int_eq(build(a), -1);
    ck_assert(as.nodeset_failed);
    ck_assert_ptr_null(strstr(err, "root:"));
    ck_assert_int_eq(build(b), -1);
    ck_assert(as.nodeset_failed);
    ck_assert_int_eq(build(c), -1);
    ck_assert(as.nodeset_failed);
    ck_assert_msg(strstr(err, "DOCTYPE") != NULL, "%s", err);
    build_ok(d);
}
END_TEST

START_TEST(test_node_limit)
{
    const char *a = put("a.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=1\" BrowseName=\"1:A\"/>\n"
        "<UAObject NodeId=\"ns=1;i=2\" BrowseName=\"1:B\"/>\n" TAIL);
    const char *b = put("b.xml", HEAD("<Uri>" URI_A "</Uri>")
        "<UAObject NodeId=\"ns=1;i=3\" BrowseName=\"1:C\"/>\n"
        "<UAObject NodeId=\"ns=1;i=4\" BrowseName=\"1:D\"/>\n" TAIL);
    char paths[300];

    snprintf(paths, sizeof(paths), "%s %s", a, b);
    conf.max_nodeset_nodes = 4;         /* at the limit: fine */
    build_ok(paths);
    bk_addrspace_close(&as);
    built = false;
    conf.max_nodeset_nodes = 3;         /* the files together count */
    build_fails(paths, b, 5, "more than addrspace.max_nodeset_nodes (3)");
}
END_TEST

/* Namespace 0's own Descriptions, from the schema's NodeSet. */
START_TEST(test_ns0_descriptions)
{
    build_ok("");
    ck_assert(str_is(node(lookup_num(0, UA_NS0ID_OBJECTSFOLDER))->desc_text,
                     "The browse entry point when looking for objects in "
                     "the server address space."));
    ck_assert(str_is(node(lookup_num(0, UA_NS0ID_MODELLINGRULE_MANDATORY))
                         ->desc_text,
                     "Specifies that an instance with the attributes and "
                     "references of the instance declaration must appear "
                     "when a type is instantiated."));
    ck_assert(str_is(node(lookup_num(0, UA_NS0ID_MODELLINGRULE_MANDATORY))
                         ->desc_locale, NULL));
    /* A node the NodeSet gives none: none. */
    ck_assert(str_is(node(lookup_num(0, UA_NS0ID_SERVER))->desc_text, NULL));
}
END_TEST

START_TEST(test_config_paths)
{
    char        path[128], want[400], cerr[256];
    const char *cf = put("uabroker.conf", "[addrspace]\n"
                         "nodesets = a.xml /abs/b.xml  sub/c.xml\n");

    ck_assert_int_eq(bk_config_load(&conf, cf, cerr, sizeof(cerr)), 0);
    snprintf(want, sizeof(want), "%s/a.xml /abs/b.xml %s/sub/c.xml", dir,
             dir);
    ck_assert_str_eq(conf.nodesets, want);
    /* --set and the defaults: as written. */
    ck_assert_int_eq(bk_config_set(&conf, "addrspace.nodesets", "x.xml",
                                   cerr, sizeof(cerr)), 0);
    ck_assert_str_eq(conf.nodesets, "x.xml");
    bk_config_defaults(&conf);
    ck_assert_str_eq(conf.nodesets, "");
    ck_assert_uint_eq(conf.max_nodeset_nodes, 4000000);
    snprintf(path, sizeof(path), "%s", dir);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("NodeSet import");
    SRunner *sr;
    int      failed;
    const struct {
        const char  *name;
        const TTest *t;
    } cases[] = {
        { "Namespace mapping", test_namespaces },
        { "Aliases", test_aliases },
        { "Every node class", test_node_classes },
        { "Scalar values", test_values_scalar },
        { "Array values and Arguments", test_values_arrays },
        { "Bad XML", test_error_bad_xml },
        { "Value text errors", test_error_value_text },
        { "Unknown aliases", test_error_alias },
        { "Required models", test_error_required_model },
        { "Hostile XML", test_hostile_xml },
        { "Node limit", test_node_limit },
        { "Paths beside the config file", test_config_paths },
        { "Namespace 0 Descriptions", test_ns0_descriptions },
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
