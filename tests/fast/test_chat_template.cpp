// Chat templates (core/text/chat_template, llama.cpp's Jinja engine): the real tokenizer_config.json files of
// Llama 3, Qwen3 and Gemma 3 render one user turn exactly as Python's Jinja2 in transformers' environment
// does (tests/data/tokenizers/chat_golden.json, tools/golden/make_chat_goldens.py); chat_template.jinja wins
// over tokenizer_config.json; named templates; a folder without one; bad templates give one clear error.

#include "core/io/json_file.h"
#include "core/text/chat_template.h"
#include "core/util/error.h"
#include "support/error_of.h"

#include <QTest>

#include <fstream>

using namespace attnlens;

namespace {

const std::filesystem::path kTokenizers = ATTNLENS_TOKENIZERS_DIR;

void write(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT
private slots:
    void realTemplatesMatchJinja2();
    void folderWithoutTemplate();
    void sourcesAndNames();
    void badTemplates();
};

void TestChatTemplate::realTemplatesMatchJinja2() {
    const Json golden =
        readJsonFile(std::filesystem::path(ATTNLENS_TEST_DATA) / "tokenizers" / "chat_golden.json");
    const auto now = golden["now"].get<std::time_t>();
    QCOMPARE(golden["models"].size(), size_t(3));
    for (const auto& [model, rendered] : golden["models"].items()) {
        const auto chat = ChatTemplate::load(kTokenizers / model);
        QVERIFY2(chat, model.c_str());
        for (size_t i = 0; i < rendered.size(); ++i)
            QCOMPARE(QString::fromStdString(chat->render(golden["texts"][i].get<std::string>(), now)),
                     QString::fromStdString(rendered[i].get<std::string>()));
    }
}

void TestChatTemplate::folderWithoutTemplate() {
    QVERIFY(!ChatTemplate::load(kTokenizers / "mistral")); // its tokenizer_config.json has none
    QTemporaryDir dir;
    QVERIFY(!ChatTemplate::load(dir.path().toStdString())); // no tokenizer_config.json at all
}

void TestChatTemplate::sourcesAndNames() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    write(dir / "tokenizer_config.json",
          R"({"bos_token": {"content": "<s>"}, "chat_template": [{"name": "tool_use", "template": "T"},
              {"name": "default", "template": "{{ bos_token }}[{{ messages[0]['content'] }}]{% if add_generation_prompt %}>{% endif %}"}]})");
    QCOMPARE(ChatTemplate::load(dir)->render("hi"), std::string("<s>[hi]>"));
    write(dir / "chat_template.jinja",
          "{% for m in messages %}{{ m.role }}: {{ m.content | upper }}{% endfor %}\n");
    QCOMPARE(QString::fromStdString(ChatTemplate::load(dir)->render("hi")), QString("user: HI"));
}

void TestChatTemplate::badTemplates() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    auto errorWith = [&](const std::string& config) {
        write(dir / "tokenizer_config.json", config);
        return errorOf([&] { ChatTemplate::load(dir)->render("hi"); });
    };
    QVERIFY(errorWith(R"({"chat_template": "{% for x in %}"})").contains("(parsing) failed"));
    QVERIFY(errorWith(R"({"chat_template": "{{ raise_exception('Only user and assistant roles') }}"})")
                .contains("Only user and assistant roles"));
    QVERIFY(errorWith(R"({"chat_template": 5})").contains("neither a string nor a list"));
    QVERIFY(errorWith(R"({"chat_template": [{"name": "rag", "template": "x"}]})").contains("\"default\""));
    QVERIFY(
        errorWith(R"({"chat_template": "{{ messages[0]['content'] }")").contains("tokenizer_config.json"));
    QVERIFY(errorWith("[1, 2]").contains("not a JSON object"));
    // a keyword argument whose name is no identifier: the engine's assert (fuzz_chat_template's finding)
    // throws
    QVERIFY(errorWith(R"({"chat_template": "{{ f(1=2) }}"})").contains("malformed template"));
    // the engine recurses without limit: a hostile template overflows the stack of its renderer process, not
    // ours — or, slowed down by the sanitizers, outlasts its deadline; either way one message
    const auto contained = [](const QString& message) {
        return message.contains("crashed its renderer") || message.contains("took longer than");
    };
    QVERIFY(
        contained(errorWith(R"({"chat_template": "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}"})")));
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    QVERIFY(contained(errorWith(R"({"chat_template": "{{ )" + deep + R"( }}"})")));
    QVERIFY(
        contained(errorWith(R"({"chat_template": "{% set ns = namespace(x=1) %}{% for i in range(100000) %})"
                            R"({% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}"})")));
}

QTEST_APPLESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
