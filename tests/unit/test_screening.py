import time

import pytest

from pipelines.screening import (
    HIGH,
    NONE,
    Screen,
    excerpt_is_high,
    is_high,
    luhn_valid,
    screen,
    shannon_entropy,
)

# Provider tokens are assembled from pieces so this file holds no literal key shapes for secret
# scanners to trip on. The bodies are random-looking but fake.
B62 = "Xy7bQ2mN9pL4kR8sT1vW6zA3cD5fG0hJ"  # 32 chars, mixed case and digits
B62_LONG = B62 + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7"
OPENAI = "s" + "k-" + B62_LONG
OPENAI_PROJECT = "s" + "k-proj-" + B62_LONG
ANTHROPIC = "s" + "k-ant-api03-" + B62_LONG + "-" + B62
GITHUB = "gh" + "p_" + B62 + "a1B2"
STRIPE = "sk" + "_live_" + B62[:24]


# --- positives ------------------------------------------------------------------------------------

API_KEYS = [
    f"here is my key {OPENAI} please use it",
    f"OPENAI_API_KEY={OPENAI_PROJECT}",
    f"client = Anthropic(api_key='{ANTHROPIC}')",
    f"git clone https://{GITHUB}@github.com/acme/app.git",
    "gh" + "o_" + B62 + "Zz90",
    "gh" + "s_" + B62 + "Qq12",
    "git" + "hub_pat_" + "11ABCDEFG0" + B62[:12] + "_" + B62 + B62[:27],
    "token is xo" + "xb-123456789012-1234567890123-" + B62[:24],
    "AWS key id AK" + "IA2E0A8F3B244C9986 in the config",
    "AS" + "IAY34FZKBOKMUTVV7A",
    "maps key AI" + "zaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    f"stripe: {STRIPE}",
    "rk" + "_live_" + B62[:24],
    "gl" + "pat-" + B62[:20],
    "hf" + "_jpEXmBFnmqWHsRAvcntVKqEuzLlRWWuJkM",
    "np" + "m_" + B62 + "a1B2",
]


@pytest.mark.parametrize("text", API_KEYS)
def test_a_pasted_provider_api_key_reads_as_high(text):
    result = screen(text)
    assert result.level == HIGH
    assert "api_key" in result.shapes  # an `api_key=...` assignment may add "secret_assignment"


def test_a_jwt_reads_as_high():
    jwt = (
        "ey"
        + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9"
    )
    assert screen(f"decode this: {jwt}").shapes == ("jwt",)


@pytest.mark.parametrize("kind", ["RSA ", "OPENSSH ", "EC ", "ENCRYPTED ", "", "PGP "])
def test_a_pem_private_key_block_reads_as_high(kind):
    block = "PRIVATE KEY BLOCK" if kind == "PGP " else "PRIVATE KEY"
    pem = f"-----BEGIN {kind}{block}-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HE\n"
    assert screen(pem).shapes == ("private_key",)


SECRET_ASSIGNMENTS = [
    "API_KEY=8f3kQ9zLm2Xp7Rt4Vb6Nc1Wd",
    'secret: "Zk8pQ2xR7mN4vB9tL3wH6yJ1"',
    "token = a8F3kL9mQ2xZ7pR4tV6bN1cW",
    '{"client_secret": "q8Vz-3kLpR7tN2mX9wB4yH6j"}',
    "apiKey: 'Jx93kdLq0PzmW7v2Rt5Yb8Nc'",
    "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY3kQ9zLm2",
    "OPENWEATHER_API_KEY=5f4dcc3b5aa765d61d8327deb882cf99",  # 32-hex keys are common
    "auth_token := 'b9Q2zX8kR4mL7pV3tN6wY1cH'",
    "SECRET_KEY = 'django-insecure-k#3$x9@p2!q8z(m4w^t7v&r1b*n6y+h0c=j5'",  # quoted: symbols allowed
]


@pytest.mark.parametrize("text", SECRET_ASSIGNMENTS)
def test_a_high_entropy_value_assigned_to_a_secret_name_reads_as_high(text):
    assert screen(text) == Screen(HIGH, ("secret_assignment",))


def test_a_bearer_token_in_an_authorization_header_reads_as_high():
    assert screen("curl -H 'Authorization: Bearer 8f3kQ9zLm2Xp7Rt4Vb6Nc1WdAa' https://api.x.io").shapes == (
        "bearer_token",
    )


PASSWORDS = [
    "password=hunter2",
    'DB_PASSWORD="S3cr3t!42"',
    "passwd: Tr0ub4dor&3",
    "pwd=Qw3rty99",
    '{"username": "bob", "password": "Summer2024!"}',
    "mysql -u root --password=Xk29aPq7",
    "userPassword: 'zY8#kq1L'",
    "My password is Tr0ub4dor&3.",
    'the passphrase was "c0rrect-H0rse"',
    "postgres://admin:Xk29aPq7@db.internal:5432/prod",
    "Wi-Fi password: Sunflower2023!",
]


@pytest.mark.parametrize("text", PASSWORDS)
def test_a_password_given_a_literal_value_reads_as_high(text):
    assert screen(text) == Screen(HIGH, ("password",))


CARDS = [
    "my card is 4111 1111 1111 1111 exp 12/27",
    "4111-1111-1111-1111",
    "5555555555554444",
    "amex 3782 822463 10005",
    "discover 6011-1111-1111-1117",
    "jcb: 3530111333300000",
    "mastercard 2223 0031 2200 3222",
    "Visa 4012888888881881, cvv 123",
    "card_number = 4111111111111111",  # code-looking, but the name says card
]


@pytest.mark.parametrize("text", CARDS)
def test_a_luhn_valid_card_number_reads_as_high(text):
    assert screen(text) == Screen(HIGH, ("card_number",))


def test_a_luhn_valid_card_with_spaces_reads_as_high():
    assert is_high("charge 4242 4242 4242 4242 please")


@pytest.mark.parametrize("text", ["my ssn is 123-45-6789", "SSN: 078-05-1120", "(ssn 219-09-9999)"])
def test_a_us_social_security_number_reads_as_high(text):
    assert screen(text) == Screen(HIGH, ("ssn",))


PINS = [
    "my PIN is 4821",
    "pin: 1234",
    "PIN code 004821",
    "the pin number is 12345678",
    "Pin = 0042",
    "PIN 9917",
    "SIM PIN: 0000",
]


@pytest.mark.parametrize("text", PINS)
def test_a_stated_pin_reads_as_high(text):
    assert screen(text) == Screen(HIGH, ("pin",))


def test_a_text_with_several_shapes_names_each_once():
    result = screen("pin: 1234, card 4111 1111 1111 1111, password=hunter2, again pin: 5678")
    assert result.level == HIGH
    assert sorted(result.shapes) == ["card_number", "password", "pin"]
    assert len(set(result.shapes)) == len(result.shapes)


# --- negatives ------------------------------------------------------------------------------------

PASSWORD_PROSE_AND_CODE = [
    "the password field should be hashed",
    "reset your password = easy",
    "Make sure the password is at least 12 characters long.",
    "The password is incorrect.",
    "my password is too long to remember",
    "Use a password manager: it generates strong passwords for you.",
    "set PASSWORD=<your password>",
    "password=${DB_PASS}",
    'password=os.environ["DB_PASS"]',
    "password = os.getenv('DB_PASSWORD')",
    "password: str",
    "password: Optional[str] = None",
    "password=None",
    'password=""',
    'password="..."',
    'password = "your_password"',
    'PASSWORD = "changeme"',
    "password = getpass.getpass()",
    "self.password = password",
    "const password = req.body.password;",
    "if (password == confirmPassword) {",
    'password: "Password must be at least 8 characters"',
    "password_hash = hashlib.sha256(pw.encode()).hexdigest()",
    "password: ********",
    "password_length = 12345678",
    "password: {{ vault_db_password }}",
    "password=%(db_pass)s",
    "PWD=/home/user/project",
    "mongodb://user:password@localhost:27017",
    "postgres://postgres:postgres@localhost:5432/app",
    "Password: required",
    "if user is None and password is None:",
    "def __init__(self, username: str, password: str) -> None: ...",
    "def make_rev_args(username: str | None, password: HiddenText | None) -> CommandArgs:",
    "url.render_as_string(hide_password=False)",
    "stream = self.root.open(self.at, zip_mode, pwd=pwd)",
    "model = Model(password='IAmSensitive')",
    '"invalid password": AuthenticationError,',
    "The password is on the sticker under the router.",
]


@pytest.mark.parametrize("text", PASSWORD_PROSE_AND_CODE)
def test_prose_about_passwords_and_password_variables_are_not_high(text):
    assert screen(text) == Screen(NONE, ())


SECRET_LOOKALIKES = [
    "the sk-learn library",
    "use sk-learn-compatible-estimators in the pipeline",
    "api_key = sk-...",
    "s" + "k-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it",
    "request id: 550e8400-e29b-41d4-a716-446655440000",
    "token: 550e8400-e29b-41d4-a716-446655440000",
    "api_key = os.getenv('OPENAI_API_KEY')",
    "api_key: YOUR_API_KEY_HERE",
    "token = tokenizer.encode(text)",
    "max_tokens: 4096",
    'tokenizer_name: "sentence-transformers/all-MiniLM-L6-v2"',
    "cache_key = user_profile_settings_2024_v2",
    "public_key: MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3x9Kq",
    "secret_name: prod-db-credentials-2024",
    "auth_url = https://auth.example.com/oauth2/token",
    "key: aaaa1111bbbb2222cccc3333",
    "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    "Authorization: Bearer <token>",
    "Basic authentication sends base64(user:password) on every request",
    "the key insight: recommendationEngineV2Improvements",
]


@pytest.mark.parametrize("text", SECRET_LOOKALIKES)
def test_ids_hashes_placeholders_and_names_are_not_secrets(text):
    assert screen(text) == Screen(NONE, ())


NUMBERS = [
    "call me at (555) 123-4567",
    "my number is +1 415 555 2671",
    "+4915112345678",
    "ISBN 978-3-16-148410-0",
    "isbn 9780306406157",
    "order id 4111111111111111",
    "Order #112-7654321-9876543",
    "tracking 1Z999AA10123456784",
    "USPS 9400 1000 0000 0000 0000 00",
    "timestamp 20240115123045",
    "epoch ms 1705312245000",
    "1234567812345678",
    "4111 1111 1111 1112",
    "pi is 3.14159265358979323846",
    "total $1,234,567.89",
    "my card ends in 4242",
    "date 2024-01-15 and 2024-01-16",
    "000-12-3456",
    "666-12-3456",
    "912-34-5678",
    "123-00-4567",
    "123-45-0000",
    "part 123-45-6789-B",
    "pin the version to 1.2",
    "PIN diode",
    "pin 13 on the Arduino",
    "I pinned 2048 posts",
    "spin at 3000 rpm",
    "the opinion 2023 survey",
    "my pin code is 560001, Bangalore, India",  # an Indian postal PIN code
    "rng = np.random.default_rng(348932549825235)",
    "seed = 3562050283508273023",
    "assert x == [4220315081820346526, 7177518203184491332]",
    "g = 15735193600000000*t**16",
]


@pytest.mark.parametrize("text", NUMBERS)
def test_numbers_that_are_not_cards_ssns_or_pins_are_not_high(text):
    assert screen(text) == Screen(NONE, ())


def test_text_whose_lowercase_changes_length_is_still_screened_at_the_right_offsets():
    # "İ" lower-cases to two characters; the screen must not misalign its keyword positions.
    assert screen("İİİİ İstanbul pin: 4821").shapes == ("pin",)
    assert screen("İİİİ password is None and pin the version").level == NONE


def test_ordinary_chat_is_not_high():
    text = (
        "I've been trying to get back into running. Last week I did 3 x 5 km and one 10 km on "
        "2023-05-14; my best pace was 5:12/km. Can you suggest a plan for a half marathon in 12 weeks? "
        "My key goal is to finish under 1:55:00."
    )
    assert screen(text) == Screen(NONE, ())
    assert not is_high(text)


# --- excerpts -------------------------------------------------------------------------------------

SECRET = "password=hunter2"


def _with_secret_at(position: int, length: int = 4000) -> str:
    filler = ("lorem ipsum dolor sit amet " * 300)[:length]
    return filler[:position] + " " + SECRET + " " + filler[position:]


def test_an_excerpt_with_a_secret_inside_the_shown_part_is_high():
    assert excerpt_is_high(_with_secret_at(100), shown_chars=240)


def test_an_excerpt_with_a_secret_within_1024_chars_past_the_shown_part_is_high():
    assert excerpt_is_high(_with_secret_at(240 + 500), shown_chars=240)


def test_an_excerpt_with_a_secret_far_past_the_shown_part_is_not_high():
    text = _with_secret_at(240 + 1100)
    assert is_high(text)
    assert not excerpt_is_high(text, shown_chars=240)


def test_an_excerpt_of_a_clean_text_is_not_high():
    assert not excerpt_is_high(_with_secret_at(0)[len(SECRET) + 2 :], shown_chars=240)


def test_an_excerpt_window_edge_does_not_clip_a_long_number_into_a_card():
    number = "41111111111111110000"  # 20 digits: not a card; its first 16 are a Luhn-valid Visa
    text = "x" * (240 + 1024 - 16) + number
    assert not excerpt_is_high(text, shown_chars=240)


# --- helpers and speed ----------------------------------------------------------------------------


def test_luhn_accepts_valid_and_rejects_off_by_one_numbers():
    assert luhn_valid("4111111111111111")
    assert luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")


def test_shannon_entropy_is_zero_for_one_symbol_and_log2_n_for_n_distinct():
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)


def test_a_screen_is_frozen():
    with pytest.raises(AttributeError):
        screen("hello").level = HIGH  # type: ignore[misc]


PATHOLOGICAL = [
    "1" * 10_000,
    "1 " * 5_000,
    "1-" * 5_000,
    "a" * 10_000,
    "password=" * 1_000,
    "key: " * 2_000,
    "x" * 9_990 + "=" * 10,
    "-----BEGIN RSA PRIVATE KEY-----" * 300,
    "pin " * 2_500,
    "s" + "k-" + "a-" * 5_000,
    "eyJ" + "a" * 5_000 + ".eyJ" + "b" * 5_000,
]


@pytest.mark.parametrize("text", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_pathological_input_is_screened_quickly(text):
    start = time.perf_counter()
    screen(text)
    assert time.perf_counter() - start < 0.05


def test_a_10_kb_chat_text_screens_in_well_under_a_millisecond_or_so():
    text = ("Sure! Here are 5 ideas for a birthday dinner in 2024: pasta, tacos, sushi. " * 140)[:10_000]
    best = min(_timed(text) for _ in range(5))
    assert best < 0.003  # typically ~0.1-0.3 ms; generous so a busy CI box stays green


def _timed(text: str) -> float:
    start = time.perf_counter()
    screen(text)
    return time.perf_counter() - start
