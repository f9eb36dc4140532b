"""PATIENT and DOCTOR from context: titles, roles, identity fields, kinship words and the directory.

A name run (:mod:`deid_ds.label.names`) becomes a person by what surrounds it:

* after a professional title (``Dr``, ``Pr``, ``Interne``, ``IDE``) or a professional phrase
  (``dicté par``, ``copie à``, ``Médecin demandeur :``), or before a role (``, assistante médicale``,
  ``— praticien hospitalier``): DOCTOR;
* on the line after a recipient header (``À l'intention de``): DOCTOR, unless a civility makes it a
  letter to the patient;
* after an identity field (``Nom d'usage``, ``Prénom(s)``, ``votre patiente``): PATIENT;
* after a kinship word (``sa fille, Mme``, ``son époux``, ``personne de confiance``): PATIENT — relatives
  are PATIENT per the guidelines;
* after a bare civility (``Mme``, ``M.``): PATIENT with low confidence (anybody may be meant: a
  professional's role or directory entry outranks it), DOCTOR when the directory knows the full name;
* on the line after a letter's closing formula (``Confraternellement,``): DOCTOR, the signer;
* before ``né(e) le`` or ``- IPP`` (a footer's identity line): PATIENT;
* a first-and-last-name pair from the Annuaire Santé, written like a name, with no cue, or a line that is
  a given name and a surname of the name gazetteer alone (a staff list with no title): DOCTOR with the
  gazetteer's (lowest) tier;
* in lower case (dictation), after a title (DOCTOR) or a civility (PATIENT), with evidence that the
  words are names (:func:`lower_case_names`).

Names are as export styles write them: an initial after the surname (``LE GOFF P.``) and a
surname broken onto the next PDF line after a title belong to the name; a name in two columns of a
fixed-width table is two (:func:`deid_ds.label.candidate.split_at_columns`).

Confidences order candidates of the same tier and length (see :mod:`deid_ds.label.resolve`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import compress

from deid_ds.kb.ambiguity import is_common_word
from deid_ds.kb.matcher import Match
from deid_ds.kb.normalize import fold
from deid_ds.label.addresses import title_names_street
from deid_ds.label.candidate import Candidate
from deid_ds.label.cues import (
    CIVILITIES,
    DICTATION_INITIALS,
    DOCTOR_CUE,
    DOCTOR_TITLES,
    NOT_NAME,
    PATIENT_CUE,
    PLURAL_DOCTOR_TITLES,
    PROFESSIONAL_TITLES,
    RECIPIENT_CUE,
    REFERENCE_INITIALS,
    RELATIVE_CUE,
    RELATIVE_WORDS,
    ROLE_WORDS,
    SIGNATURE_CUE,
    STAFF_HEADING,
    cue_matches,
    line_end_after,
)
from deid_ds.label.names import (
    core_flags,
    core_tokens,
    is_core,
    is_french_word,
    is_particle,
    name_after,
    name_end,
    name_start,
    runs_with,
)
from deid_ds.label.patient import PatientNames
from deid_ds.label.view import LOWER, TITLE, UPPER, NoteView

#: Titles written before a name only (a role word may end a phrase before a new sentence: ``X, interne Absence``).
_NAMING_TITLES = DOCTOR_TITLES | PLURAL_DOCTOR_TITLES
_ROLE_SEPARATORS = frozenset({",", "—", "–", "-", "("})
#: A staff heading with blanks around it: true of every line whose stripped text is a heading (the heading
#: pattern has no anchor or lookaround), and tested on the folded text between the line's offsets, with
#: no slice or strip: most lines of a note fail it, and only the others are given the heading's own test.
_HEADING_LINE = re.compile(rf"\s*(?:{STAFF_HEADING.pattern})\s*", STAFF_HEADING.flags)
#: Roles written in capitals before a first name in nurse transmissions (``AS Julie``, ``CDS Djamila``, ``IAO :
#: Paulette M.``, a paediatric ward's ``PDE Maëlle`` and ``EJE Inès``): capitals only, the same letters being words
#: or abbreviations otherwise; ``Inf.`` with its period.
_CAPITAL_ROLES = frozenset(
    {"AS", "CDS", "IAO", "IOA", "ASH", "Inf.", "INF.", "Int.", "INT.", "Int", "INT", "PDE", "EJE", "IPA", "IDEL"}
)
#: The folded tokens the title, civility and role rules start from.
_START_WORDS = (
    PROFESSIONAL_TITLES
    | CIVILITIES
    | frozenset(map(fold, _ROLE_SEPARATORS))
    | frozenset(map(fold, _CAPITAL_ROLES))  # roles in capitals
    | {"patient", "patiente"}  # lower-case names after them (lower_case_names)
    | frozenset(map(fold, RELATIVE_WORDS))
    | {"reverrai", "revois"}
    | {"ne", "nee", "ne(e)", "ipp"}  # names before them (_names_before_identity)
    | {"petit", "petite", "cher", "chere"}  # names after them (_names_set_apart)
)


def _rule_starts(view: NoteView) -> list[int]:
    """Indices of the tokens among :data:`_START_WORDS`, found once per note by a scan in C.

    The title, civility and role rules each looked at every token of the note for a few; each now
    looks at these only (a few in a hundred tokens), keeping the tokens of its own kind.
    """
    starts = view.cache.get("rule_starts")
    if starts is None:
        folded = view.folded
        starts = view.cache["rule_starts"] = list(compress(range(len(folded)), map(_START_WORDS.__contains__, folded)))
    return starts


#: A name field of an identity block, with its colon or tab: what follows is a name even if made of French words.
_NAME_FIELD = re.compile(r"(?:NOM|PR[EÉ]NOMS?)\b[^:\t\n]{0,20}[:\t]")


def _names_after(
    view: NoteView, cues: Iterable[tuple[int, int]], *, initial_m: bool = False
) -> Iterable[tuple[int, int]]:
    """Token runs of the names that directly follow each cue match, on the same line.

    A cue written in capitals (``OBJET :``, ``LE PATIENT``, ``NE`` for né) is followed by capitals whatever
    comes next, so there a run of French words only (``DEMANDE D'AVIS``, ``A ETE INFORME``, ``PRESENTE``)
    is no name; but a name field with its colon (``NOM: LE ROUX``, ``PRENOM : BLANCHE``) holds a name whatever
    its words mean.
    """
    text = view.text
    for cue_start, cue_end in cues:
        i = view.index_at(cue_end)
        if i >= len(view) or view.starts[i] < cue_end or "\n" in text[cue_end : view.starts[i]]:
            continue  # the cue ends inside a word, or at the end of its line
        found = name_after(view, i, initial_m=initial_m)
        cue = text[cue_start:cue_end]
        if found and not (cue.isupper() and not _NAME_FIELD.match(cue) and _french_words_only(view, found)):
            yield found


def _french_words_only(view: NoteView, run: tuple[int, int]) -> bool:
    """Whether every word of ``run`` longer than an initial is a French word (a feminine or plural form of a
    word of the lexicon, or a verb's present, counts: the lexicon lists lemmas, ``présenter``, not ``PRESENTE``)."""
    words = [view.words[k].lower() for k in range(*run) if view.shapes[k] in (UPPER, TITLE, LOWER)]
    return bool(words) and all(map(is_french_word, words))


def over_two_lines(view: NoteView, run: tuple[int, int]) -> tuple[int, int]:
    """``run`` with the surname on the next line when a PDF export broke the name there.

    Guidelines: "a name [...] broken over two lines of a PDF export" is one span. Only the plain case
    is taken, after a title: a given name alone ending its line (``Dr Jean``), and the next line an
    upper-case surname alone (``DUPONT``, ``LE GAC``), nothing after it on that line, no French word
    (a heading: ``HOSPITALISATION``).
    """
    i, j = run
    n = len(view)
    if not (
        j == i + 1
        and j < n
        and view.shapes[i] == TITLE
        and view.gap(i).count("\n") == 1
        and view.gap(i).strip() == ""
        and view.shapes[j] == UPPER
    ):
        return run
    end = name_end(view, j)
    words = view.words
    if end == j or not view.line_end(end - 1) or any(view.shapes[k] != UPPER for k in range(j, end)):
        return run
    cores = [k for k in range(j, end) if is_core(view, k)]
    if all(len(words[k]) > 1 and not is_common_word(words[k].lower(), accents_known=False) for k in cores):
        return i, end
    return run


def _candidate(view: NoteView, run: tuple[int, int], label: str, source: str, confidence: float) -> Candidate:
    start, end = view.span(*run)
    return Candidate(start, end, label, source, confidence)


#: Titles that are adjectives too (``face interne``).
_ADJECTIVE_TITLES = frozenset({"interne", "externe"})


def doctor_context(view: NoteView, folded_text: str, matches=()) -> list[Candidate]:
    """DOCTOR candidates from titles, professional phrases, roles after a name and recipient headers.

    ``matches``: the note's gazetteer matches (a commune listed after a name is no second name)."""
    found: list[Candidate] = []
    n = len(view)
    folded = view.folded
    for i in _rule_starts(view):
        if (folded[i] in PROFESSIONAL_TITLES or view.words[i] in _CAPITAL_ROLES) and i + 1 < n and view.joined(i):
            if title_names_street(view, i):
                continue  # "place du Docteur Guérin": the street's name, not a professional
            j = i + 1
            if view.words[j] == ":" or (view.words[j] == "." and len(folded[i]) <= 3):
                j += 1  # "Interne : X", "Dr. X"; not "..., interne. Conduite à tenir"
                if j >= n or not view.joined(j - 1):
                    continue
            run = name_after(view, j, initial_m=True)
            if run and folded[i] in _ADJECTIVE_TITLES and view.words[i].isupper() and _french_words_only(view, run):
                continue  # "A LA FACE INTERNE DU BRAS GAUCHE": the adjective, in a letter typed in capitals
            if run:
                found.append(_candidate(view, over_two_lines(view, run), "DOCTOR", "context:title", 0.95))
                # "Drs A, B et C", a role's field in a transmission ("AS : Katell, Morgane"): a list; else "A / B"
                listing = folded[i] in PLURAL_DOCTOR_TITLES or view.words[i + 1] == ":"
                separators = _LIST_SEPARATORS if listing else _SLASH
                found += [
                    _candidate(view, more, "DOCTOR", "context:title", 0.9)
                    for more in _listed_names(view, run, separators)
                    if _set_apart(view, more) and not _a_commune(view, more, matches)
                ]
    for cue_start, cue_end in cue_matches(DOCTOR_CUE, folded_text, view.text):
        for run in _names_after(view, ((cue_start, cue_end),)):
            found.append(_candidate(view, _initial_if_known(view, run), "DOCTOR", "context:phrase", 0.9))
            plural = _CUE_WORD.match(folded_text, cue_start).group().endswith("s")  # the cue's first word
            found += [  # "Aides : SALAUN, CADIOU", "Opérateur : KERBRAT / LE GALL"
                _candidate(view, more, "DOCTOR", "context:phrase", 0.85)
                for more in _listed_names(view, run, _LIST_SEPARATORS if plural else _SLASH)
                if _set_apart(view, more)
            ]
    for i in _rule_starts(view):
        if (
            view.words[i] in _ROLE_SEPARATORS
            and i + 1 < n
            and (folded[i + 1] in ROLE_WORDS or (view.words[i] == "(" and view.words[i + 1] in _CAPITAL_ROLES))
            and i > 0
        ):
            if not view.joined(i) and view.gap(i) != "":
                continue
            if folded[i + 1] in _NAMING_TITLES and _titled_name_at(view, i + 1):
                continue  # "CH de Redon (Dr Paul KERVELLA)": the title names who follows it, not the word before
            start = name_start(view, i)
            if start < i and not _announced_as_relative(view, start):
                if (
                    start > 0
                    and view.words[start - 1] == "M."
                    and view.joined(start - 1)
                    and len(core_tokens(view, start, i)) == 1
                    and (_feminine_role(folded[i + 1]) or _m_given_name_in_note(view, start, i))
                ):
                    start -= 1  # "M. Gestin, assistante médicale": an initial; "M. Jaouen, kiné": Monsieur
                found.append(_candidate(view, (start, i), "DOCTOR", "context:role", 0.9))
    found += _signatures(view, folded_text)
    found += [
        _candidate(view, run, "DOCTOR", "context:salutation", 0.75) for run in _names_set_apart(view, _SALUTATION_NOUNS)
    ]
    for _, cue_end in cue_matches(RECIPIENT_CUE, folded_text, view.text):
        if not line_end_after(view.text, cue_end):
            continue
        i = view.index_at(cue_end)
        if i < n and view.folded[i] not in CIVILITIES:
            run = name_after(view, i)
            if run:
                found.append(_candidate(view, run, "DOCTOR", "context:recipient", 0.7))
    return found


#: Endings of a role word in the feminine only (``assistante``, ``infirmière``, ``directrice``, ``diététicienne``).
_FEMININE_ENDINGS = ("ante", "iere", "rice", "euse", "enne", "esse", "femme")


def _feminine_role(folded_word: str) -> bool:
    """Whether a role word names a woman only: then an ``M.`` before her name is an initial, not Monsieur."""
    return folded_word.endswith(_FEMININE_ENDINGS)


def _m_given_name_in_note(view: NoteView, start: int, end: int) -> bool:
    """Whether the note writes the surname of the name run ``[start, end)`` elsewhere with a given name or an
    initial in M (``Dr M. Léon``, ``Mathieu LÉON``, ``LÉON Mathieu``): then ``M. Léon`` is that initial."""
    cores = [k for k in range(start, end) if is_core(view, k) and len(view.words[k]) > 1]
    if not cores:
        return False
    words, folded, shapes = view.words, view.folded, view.shapes
    surname = folded[cores[-1]]
    n = len(view)
    for k, word in enumerate(folded):
        if word != surname or k == cores[-1]:
            continue
        for g in (k - 1, k + 1):
            if 0 <= g < n and words[g][:1] == "M" and view.joined(min(g, k)):
                if shapes[g] == TITLE and folded[g] not in CIVILITIES:
                    return True  # "Mathieu LÉON", "LÉON Mathieu"
                if g == k - 1 and words[g] == "M." and g > 0 and folded[g - 1] in PROFESSIONAL_TITLES:
                    return True  # "Dr M. Léon"
    return False


def _initial_if_known(view: NoteView, run: tuple[int, int]) -> tuple[int, int]:
    """``run`` with the ``M.`` before it when that is an initial: a feminine role follows (``Rédigé par M. Abalain,
    assistante``) or the note gives the name with an M given name elsewhere; otherwise ``M.`` is Monsieur and,
    a civility, stays outside (guidelines): ``Dicté par M. Le Du, secrétaire``."""
    start, end = run
    n = len(view)
    if start > 0 and view.words[start - 1] == "M." and view.joined(start - 1):
        feminine = end + 1 < n and view.words[end] in (",", "(") and _feminine_role(view.folded[end + 1])
        if feminine or _m_given_name_in_note(view, start, end):
            return start - 1, end
    return run


#: What separates the names of a list after a plural cue (``Drs Lemoine, Abgrall et Saliou``); a slash alone
#: after a singular one (``IBODE : LE BRAS M. / QUEFFELEC A.``: the operating-room style of one name per role).
_LIST_SEPARATORS = (",", "et", "/")
_SLASH = ("/",)


def _listed_names(
    view: NoteView, run: tuple[int, int], separators: tuple[str, ...] = (",", "et")
) -> list[tuple[int, int]]:
    """The names listed after ``run`` on its line, each after one of ``separators`` (``Drs Lemoine, Abgrall et
    Saliou``)."""
    more: list[tuple[int, int]] = []
    n = len(view)
    k = run[1]
    while k + 1 < n and view.words[k] in separators and view.joined(k - 1) and view.joined(k):
        nxt = name_after(view, k + 1, skip_titles=False)
        if nxt is None or nxt[0] != k + 1:
            break
        more.append(nxt)
        k = nxt[1]
    return more


def _titled_name_at(view: NoteView, i: int) -> bool:
    """Whether the title at token ``i`` is followed by a name on its line (``Dr Paul KERVELLA``)."""
    j = i + 1
    if j < len(view) and view.words[j] == "." and view.gap(i) == "" and len(view.folded[i]) <= 3:
        j += 1  # "Dr. X"; not "..., interne. Conduite à tenir"
    return j < len(view) and view.joined(j - 1) and name_after(view, j, initial_m=True) is not None


def _signatures(view: NoteView, folded_text: str) -> list[Candidate]:
    """DOCTOR candidates for the name alone on its line after a letter's closing formula (``Cordialement,``).

    Guidelines: every care professional is DOCTOR; a signature block names its signer with no title as
    often as with one (``Confraternellement,`` then ``LE MOIGNE S.``). The line must be the name alone:
    a department or a hospital on it is not a signer.
    """
    text = view.text
    n = len(view)
    found: list[Candidate] = []
    for _, cue_end in cue_matches(SIGNATURE_CUE, folded_text, text):
        if not line_end_after(text, cue_end):
            continue
        i = view.index_at(cue_end)
        if i >= n or text.count("\n", cue_end, view.starts[i]) > 3:
            continue
        run = name_after(view, i, initial_m=True)
        if run is None:
            continue
        line_end = text.find("\n", view.ends[run[1] - 1])
        rest = text[view.ends[run[1] - 1] : len(text) if line_end < 0 else line_end]
        if rest.strip(" \t,.") == "":  # the name alone on its line (the cue ended the previous one)
            found.append(_candidate(view, run, "DOCTOR", "context:signature", 0.85))
    return found


#: Kinship words naming several people: the names listed after them are all relatives.
_PLURAL_KIN = frozenset({"enfants", "filles", "fils", "petits-enfants", "soeurs", "sœurs", "freres", "parents"})
_CUE_WORD = re.compile(r"[\w\-]+")  # a word of a cue (a kinship word, a role)


def _apposition_ends(view: NoteView, end: int) -> bool:
    """Whether a name run ending at token ``end`` is set apart as a name is in an apposition or a list: a comma,
    bracket, period or ``et`` follows, or its line ends (``le fils, Pierre, passe``; not ``le fils, Domicilié à``)."""
    return end >= len(view) or not view.joined(end - 1) or view.words[end] in (",", ")", ".", ";", "et")


def _set_apart(view: NoteView, run: tuple[int, int], *, after_et: bool = True, slash: bool = False) -> bool:
    """Whether a name listed after another is set apart as a list's name is: it ends its apposition
    (:func:`_apposition_ends`), or a slash follows it (``slash``), or it comes after ``et`` and ends the list
    (``after_et``: ``A, B et C viennent``)."""
    start, end = run
    if after_et and view.words[start - 1] == "et":
        return True
    return _apposition_ends(view, end) or (slash and view.words[end] == "/")


def _a_commune(view: NoteView, run: tuple[int, int], matches) -> bool:
    """Whether every word of ``run`` is a commune's of the knowledge base (``Interne : Paul, Brest``)."""
    return _commune_words(view, matches).issuperset(view.folded[run[0] : run[1]])


#: What comes before a kinship word that :func:`_relatives_after_article` reads: an article, a possessive, a number.
_KIN_ARTICLES = frozenset(
    "le la les l' l’ un une des mon ma mes votre vos notre nos deux trois quatre cinq six".split()
)
#: What may follow the kinship word before the punctuation: ``la fille de la patiente``, ``le fils du patient``.
_KIN_OF = (("de", "la", "patiente"), ("du", "patient"), ("de", "l'", "enfant"), ("de", "madame"), ("de", "monsieur"))


#: Nouns after which a name set apart is the patient's (``votre patient, Yves Le Dantec,``; ``le petit Mathis, 4
#: ans``: a paediatric note's child) or, in a letter's salutation, its recipient's (``Mon cher Yann,``).
_PATIENT_NOUNS = frozenset({"patient", "patiente", "petit", "petite"})
_SALUTATION_NOUNS = frozenset({"cher", "chere"})


def _names_set_apart(view: NoteView, nouns: frozenset[str]) -> list[tuple[int, int]]:
    """Name runs right after one of ``nouns`` (and a comma for ``patient``), ended by a comma, a bracket, a period or
    the line's end: an apposition (``votre patient, Yves Le Dantec, s'est présenté``, ``la petite Léa, 4 ans``,
    ``Mon cher Yann,``). ``cher`` and ``petit`` must start their phrase (``Mon cher``, ``le petit``), so that an
    adjective before a common noun in capitals (``CHER CONFRERE``) or a word of the lexicon is no name."""
    folded, words = view.folded, view.words
    n = len(view)
    found = []
    for i in _rule_starts(view):
        if folded[i] not in nouns or i + 1 >= n or not view.joined(i):
            continue
        j = i + 1
        if folded[i] in ("patient", "patiente"):
            if words[j] != "," or j + 1 >= n or not view.joined(j):
                continue  # "Patient : X" is an identity field's, read by its cue
            j += 1
        elif i > 0 and view.joined(i - 1) and folded[i - 1] not in ("le", "la", "mon", "ma", "notre", "votre"):
            continue
        if view.shapes[j] != TITLE:
            continue
        run = name_after(view, j, skip_titles=False)
        if run and run[0] == j and _apposition_ends(view, run[1]) and not _french_words_only(view, run):
            found.append(run)
    return found


def _relatives_after_article(view: NoteView) -> list[tuple[tuple[int, int], bool]]:
    """The names set apart after an article (or a number) and a kinship word: ``le petit-fils (Mattéo)``, ``la fille
    de la patiente, Mme X``, ``deux enfants (Yann et Gaëlle)``; with whether the kinship word is plural.

    The comma, colon or bracket is required, and the name must end its apposition: without them an article and a
    kinship word are as often followed by words that are no name (``la mère Supérieure``, ``le père (Décédé en
    2010)``). Read on the tokens the rules start from (kinship words are among them), not with a cue regex: one
    tried at every ``le`` or ``la`` of a note made the labeller 4 % slower."""
    folded, words = view.folded, view.words
    n = len(view)
    found = []
    for i in _rule_starts(view):
        if folded[i] not in RELATIVE_WORDS or i == 0 or folded[i - 1] not in _KIN_ARTICLES or not view.joined(i - 1):
            continue
        j = i + 1
        for tail in _KIN_OF:
            if tuple(folded[j : j + len(tail)]) == tail and all(view.joined(k) for k in range(i, j + len(tail))):
                j += len(tail)
                break
        if j + 1 < n and words[j] in (",", ":", "(") and view.joined(j - 1) and view.joined(j):
            run = name_after(view, j + 1)
            if run and _apposition_ends(view, run[1]):
                found.append((run, folded[i] in _PLURAL_KIN))
    return found


def _announced_as_relative(view: NoteView, start: int) -> bool:
    """Whether a kinship word introduces the name starting at token ``start``, a few words before it on its line
    (``Sa fille Nolwenn, aide-soignante``, ``la fille de la patiente, Mme X, infirmière``): a relative with a
    profession is a relative here (guidelines: relatives are PATIENT), not the professional the role suggests."""
    k = start - 1
    while k >= 0 and start - k <= 6 and view.joined(k) and view.words[k] not in (".", ";", "!", "?"):
        if view.folded[k] in RELATIVE_WORDS:
            return True
        k -= 1
    return False


def patient_context(
    view: NoteView, folded_text: str, directory_names: set[tuple[int, int]], matches=()
) -> list[Candidate]:
    """PATIENT candidates from identity fields, kinship words and civilities.

    ``directory_names`` holds the text spans of full names found in the Annuaire Santé: a civility
    before one of them announces a professional. ``matches``: the note's gazetteer matches (a commune is no
    given name after the surname: ``Patient : LE GALL, Brest``).
    """
    found: list[Candidate] = []
    for cue_start, cue_end in cue_matches(PATIENT_CUE, folded_text, view.text):
        for run in _names_after(view, ((cue_start, cue_end),)):
            found.append(_candidate(view, run, "PATIENT", "context:identity", 0.85))
            # "Prénom(s) : Anne, Marie": every given name of the field; "Patient : LE GALL, Jean-Yves", "IDENTITE :
            # GUILLOU / Yannick / 56 ans": the given name after the surname
            given_names = folded_text.startswith("prenom", cue_start)
            found += [
                _candidate(view, more, "PATIENT", "context:identity", 0.85)
                for more in _listed_names(view, run, (",", "et") if given_names else (",", "/"))[
                    : None if given_names else 1
                ]
                if _set_apart(view, more, after_et=False, slash=True)
                and (given_names or not _a_commune(view, more, matches))
            ]
    relatives = [
        (run, not _PLURAL_KIN.isdisjoint(_CUE_WORD.findall(folded_text, cue_start, cue_end)))
        for cue_start, cue_end in cue_matches(RELATIVE_CUE, folded_text, view.text)
        for run in _names_after(view, ((cue_start, cue_end),))
    ]
    for run, plural in relatives + _relatives_after_article(view):
        found.append(_candidate(view, run, "PATIENT", "context:relative", 0.9))
        if plural:  # "ses enfants Yann et Gaëlle", "deux filles (Anne, Lise)": every name of the list
            found += [
                _candidate(view, more, "PATIENT", "context:relative", 0.9)
                for more in _listed_names(view, run)
                if _set_apart(view, more)  # not "FILS, X, JOIGNABLE"
            ]
    found += _names_before_identity(view)
    found += [
        _candidate(view, run, "PATIENT", "context:identity", 0.8) for run in _names_set_apart(view, _PATIENT_NOUNS)
    ]
    n = len(view)
    for i in _rule_starts(view):
        if (
            view.folded[i] in CIVILITIES
            and i + 1 < n
            and view.joined(i)
            and view.folded[i + 1] not in PROFESSIONAL_TITLES
        ):
            if i > 0 and view.folded[i - 1] in CIVILITIES:
                continue  # "Madame M. Le Gall": the first civility speaks for both
            if view.folded[i] == "mm" and i > 0 and view.words[i - 1][-1].isdigit():
                continue  # "kyste de 12 MM lobe droit": millimetres, not "Messieurs"
            run = name_after(view, i)
            if run:
                span = view.span(*run)
                if span in directory_names:
                    found.append(Candidate(*span, "DOCTOR", "context:civility_directory", 0.7))
                elif _role_on_next_line(view, run[1]) or _role_just_before(view, i):
                    found.append(Candidate(*span, "DOCTOR", "context:role", 0.8))
                else:
                    found.append(Candidate(*span, "PATIENT", "context:civility", 0.6))
    return found


#: Care disciplines and the secretariat, after which a civility and a name in brackets or after a colon are the
#: therapist's or the secretary's (``Kinésithérapie (M. X)``, ``Orthophonie : Mme Y``, ``Secrétariat : Mme Z``).
_DISCIPLINES = frozenset(
    """kinesitherapie kine orthophonie ergotherapie psychomotricite psychologie dietetique podologie orthoptie
    reeducation secretariat""".split()
)


def _role_just_before(view: NoteView, i: int) -> bool:
    """Whether the civility at token ``i`` follows a role and a comma, colon or bracket on its line (``l'infirmière de
    coordination, Mme X``, ``Assistante sociale : Mme Y``, ``l'externe (M. Z)``): the role names who follows."""
    if i < 2 or view.words[i - 1] not in (",", ":", "(") or not view.joined(i - 2):
        return False
    k = i - 2
    while k >= 0 and i - 2 - k < 3:
        if view.folded[k] in ROLE_WORDS or view.folded[k] in _DISCIPLINES:
            return True
        if k == 0 or not view.joined(k - 1):
            return False
        k -= 1
    return False


#: Words of the role line a signature block writes under the signer's name (``MADAME M. BOUEDEC`` /
#: ``SECRETARIAT``, ``CHEF DE SERVICE``, ``PRATICIEN HOSPITALIER``).
_SIGNER_LINE_WORDS = ROLE_WORDS | {"secretariat", "de", "du", "service", "hospitalier", "hospitaliere", "medical"}


def _role_on_next_line(view: NoteView, end: int) -> bool:
    """Whether the name ending before token ``end`` ends its line and the next line is a role alone (at most
    four words, all of a role: not ``Médecin traitant : Dr X`` under a patient's name)."""
    if end >= len(view) or view.gap(end - 1).count("\n") != 1 or view.gap(end - 1).strip():
        return False
    if view.folded[end] not in ROLE_WORDS and view.folded[end] != "secretariat":
        return False
    k = end
    while k < len(view) and k - end < 4:
        if view.folded[k] not in _SIGNER_LINE_WORDS:
            return False
        if view.line_end(k):
            return True
        k += 1
    return False


_BIRTH = frozenset({"ne", "nee", "ne(e)"})
_BEFORE_IPP = frozenset({"-", "–", "—", ",", "/", "|"})


def _names_before_identity(view: NoteView) -> list[Candidate]:
    """PATIENT candidates for a name written just before ``né(e) le`` or ``- IPP`` (a footer's identity line).

    ``DUBOIS R. né le 20 janvier 1950``, ``LECOMTE S. - IPP 92524959``: nobody but the patient is
    given a birth date or a hospital number in a note; the initial after the surname belongs to it.
    """
    folded, words = view.folded, view.words
    n = len(view)
    found: list[Candidate] = []
    for k in _rule_starts(view):
        f = folded[k]
        if k == 0 or f not in _IDENTITY_AFTER:
            continue
        if f in _BIRTH:
            if k + 1 >= n or not (folded[k + 1] == "le" or view.shapes[k + 1] == "d") or not view.joined(k - 1):
                continue
            end = k
        elif k >= 2 and words[k - 1] in _BEFORE_IPP and view.joined(k - 1) and view.joined(k - 2):
            end = k - 1
        else:
            continue
        start = name_start(view, end)
        if start < end:
            found.append(_candidate(view, (start, end), "PATIENT", "context:identity", 0.85))
    return found


_IDENTITY_AFTER = _BIRTH | {"ipp"}


def directory_names(view: NoteView, matches) -> list[Candidate]:
    """DOCTOR candidates for the Annuaire Santé's full names found in the text, written as names.

    ``matches`` are the gazetteer matcher's matches on the note. A full name (first and last name in
    either order) is kept when all its tokens are name-shaped and it is not a common-word pair.
    """
    found: list[Candidate] = []
    # The matcher gives all keys read the same way one shared categories tuple, and both tests depend on
    # it only: they are made once per tuple and note, remembered by identity (the matches hold the
    # tuples, so no identity is reused meanwhile).
    full_name: dict[int, bool] = {}
    for match in matches:
        categories = match.categories
        is_full_name = full_name.get(id(categories))
        if is_full_name is None:
            is_full_name = full_name[id(categories)] = not match.ambiguous and _is_full_name(categories)
        if not is_full_name:
            continue
        core = core_flags(view)
        i, j = view.index_at(match.start), view.index_before(match.end) + 1
        if j - i < 2 or not all(
            core[k] or view.shapes[k] == "I" or view.folded[k] in ("de", "le", "la", "d'") for k in range(i, j)
        ):
            continue
        if not (core[i] or view.shapes[i] == "I") or not core[j - 1]:
            continue
        found.append(Candidate(view.starts[i], view.ends[j - 1], "DOCTOR", "gazetteer:directory", 0.8))
    return found


def name_lines(view: NoteView, matches) -> list[Candidate]:
    """DOCTOR candidates for a line or table cell that is a name alone, a first name and a surname the
    knowledge base's name gazetteer supports, with no title (staff lists, table rows, signature blocks).

    Guidelines: every care professional is DOCTOR, and staff lists name them with no title. The line
    must hold only the name run, with two or three name words: a given name of the gazetteer written as
    one (``Karine``), and a surname in capitals that is a surname of the gazetteer or no French word
    (``LE BRIS``). An address under it (the next line starts with a number) makes it a letter's
    addressee, not staff. The gazetteer's (lowest) tier: any context or the metadata outranks it.
    """
    name_matches = _name_matches(view, matches)
    given = {m.start for m in name_matches["firstname"] if " " not in m.key}
    if not given:
        return []
    given_words = {m.key for m in name_matches["firstname"]}
    family = name_matches["lastname"]
    core = core_flags(view)
    starts, shapes, words = view.starts, view.shapes, view.words
    n = len(view)
    found: list[Candidate] = []
    surnames: set[int] | None = None
    # only the runs holding a given name of the gazetteer (runs_with: a search, not a walk of every run)
    for i, j in runs_with(view, given_words):
        cores = [k for k in range(i, j) if core[k]]
        if not 2 <= len(cores) <= 3 or not (view.line_start(i) and view.line_end(j - 1)):
            continue
        if not any(shapes[k] == TITLE and starts[k] in given for k in cores):
            continue
        upper = [k for k in cores if shapes[k] == UPPER]
        if not upper:
            continue
        if surnames is None:  # every word of the gazetteer's surnames (LE BRIS), once per note
            surnames = {s for m in family for s in starts[view.index_at(m.start) : view.index_before(m.end) + 1]}
        if not any(starts[k] in surnames or not is_common_word(words[k].lower(), accents_known=False) for k in upper):
            continue
        if j < n and view.shapes[j] == "d" and "\n" in view.gap(j - 1):
            continue  # "Jeanne LE GALL" then "12 rue ...": an addressee
        found.append(Candidate(starts[i], view.ends[j - 1], "DOCTOR", "gazetteer:name_line", 0.6))
    return found


def _is_full_name(categories) -> bool:
    """Whether one of a key's readings is a full name of the directory (``names`` table)."""
    return any(c.table == "names" and c.kind == "fullname" for c in categories)


def staff_lists(view: NoteView, folded_text: str) -> list[Candidate]:
    """DOCTOR candidates for the names listed under a staff heading (``Secrétariat``, ``Internes``).

    Letterheads list a department's people under headings, one per line, with or without a civility;
    every line up to the next blank line that is a name alone (titles and civilities aside) is one.
    """
    text = view.text
    found: list[Candidate] = []
    position = 0
    for line in text.split("\n"):
        line_start = position
        position += len(line) + 1
        if _HEADING_LINE.fullmatch(folded_text, line_start, line_start + len(line)) is None:
            continue
        if not STAFF_HEADING.fullmatch(folded_text[line_start : line_start + len(line)].strip()):
            continue
        cursor = position
        while cursor < len(text):
            end = text.find("\n", cursor)
            end = len(text) if end < 0 else end
            if not text[cursor:end].strip():
                break
            i = view.index_at(cursor)
            run = name_after(view, i, initial_m=True) if i < len(view) else None
            # the line's last non-blank character (the line holds one: it is not blank)
            if run is None or view.ends[run[1] - 1] < cursor + len(text[cursor:end].rstrip()):
                break  # not a name alone on its line: the list is over
            if DICTATION_INITIALS.fullmatch(text, cursor, end):
                break  # "PAD-GP": dictation initials, two spans (dictation_initials), after the signature
            found.append(_candidate(view, run, "DOCTOR", "context:staff_list", 0.85))
            cursor = end + 1
    return found


def dictation_initials(text: str) -> list[Candidate]:
    """DOCTOR candidates for dictation initials (``YK/CL`` alone on a line, or after a letter's ``Réf.``): the
    author's and the typist's."""
    found: list[Candidate] = []
    for match in DICTATION_INITIALS.finditer(text):
        for group in (1, 2):
            found.append(Candidate(match.start(group), match.end(group), "DOCTOR", "pattern:dictation_initials", 0.9))
    if "f" in text:  # "Réf", "réf", "Références": most notes have none of these lines
        for match in REFERENCE_INITIALS.finditer(text):
            start = match.start("initials")
            for part in match.group("initials").split("/"):
                found.append(Candidate(start, start + len(part), "DOCTOR", "pattern:dictation_initials", 0.85))
                start += len(part) + 1
    return found


#: Words after which a lower-case name is a professional's (``vu par le docteur marc lefevre``) or anybody's
#: (``la patiente madame jeanne le gall``, a civility: PATIENT, as for a capitalised name).
_LOWER_DOCTOR_ANCHORS = frozenset({"dr", "dr.", "docteur", "pr", "pr.", "professeur"})  # not "interne", an adjective
_LOWER_PATIENT_ANCHORS = CIVILITIES | {"patient", "patiente"}
#: Words after which one lower-case name is enough (``sa fille simone``, ``née bruneau``, ``je reverrai
#: colombo``): a relative or a birth name is written with one word as often as not.
_LOWER_ONE_NAME_ANCHORS = frozenset(map(fold, RELATIVE_WORDS)) | {"nee", "reverrai", "revois"}
_LOWER_PATIENT_ANCHORS |= _LOWER_ONE_NAME_ANCHORS
#: Endings of conjugated verbs and participles, which the lexicon of lemmas lacks (``présente``, ``décrit``
#: are not in it): a lower-case word ending so after ``le patient`` is read as a verb, not a name.
_VERB_ENDINGS = ("é", "ée", "és", "ées", "ait", "aient", "era", "erait", "ons", "ez")
#: Auxiliaries and the verbs dictation puts right after a title (``le docteur est absente``, ``le docteur a vu``):
#: never the first word of a name, even one the evidence of the next word would carry.
_VERBS_AFTER_TITLE = frozenset(
    """a est etait sera serait va vient sont ont avait aura passe part reste revient repasse rappelle pense
    souhaite demande propose confirme note signale indique explique prend voit revoit""".split()
)
_NAME_WORD_MAX = 5  # lower-case tokens read after an anchor (a first name, particles, a compound surname)


def lower_case_names(view: NoteView, patient: PatientNames | None, matches, *, doctor: bool) -> list[Candidate]:
    """Lower-case names after a title or a civility, as dictation transcripts write them.

    Guidelines: "Names keep their case as written: a lower-case name in dictated text (``vu par le
    docteur [marc lefevre]``) is annotated like any other." Nothing in the shape of a lower-case word says
    name, so each word needs evidence: one of the patient's names (metadata), a name of the knowledge
    base's name gazetteer, or (weaker) no French word of the lexicon. A professional's title takes a run
    whose last word has evidence and whose first may be a common word (``marc``) before it; a civility or
    ``le patient``, after which verbs follow as often as names, takes two name words only, or one the
    metadata or the gazetteer knows. ``doctor`` picks the anchors: the titles (DOCTOR) or the civilities
    (PATIENT). Anchored on those words (a scan in C), so a note without a lower-case word after one
    costs nothing more.
    """
    folded, shapes, words = view.folded, view.shapes, view.words
    n = len(view)
    joins = view.joins
    anchor_words = _LOWER_DOCTOR_ANCHORS if doctor else _LOWER_PATIENT_ANCHORS
    anchors = [
        k
        for k in _rule_starts(view)
        if (
            folded[k] in anchor_words or (doctor and folded[k] == "interne" and k > 0 and folded[k - 1] in ("l'", "l’"))
        )
        and k + 1 < n
        and shapes[k + 1] == LOWER
        and joins[k]
    ]
    if not anchors:
        return []
    known: frozenset[str] | None = None  # the gazetteer's name words, looked up only if a word needs them
    places: frozenset[str] | None = None  # and its communes' words
    found: list[Candidate] = []
    for k in anchors:
        first_word = k + 1
        if doctor and folded[first_word] in CIVILITIES and first_word + 1 < n and joins[first_word]:
            first_word += 1  # "l'interne mme guyader": the civility after the title stays outside
        run = _lower_run(view, first_word, n)
        if not run:
            continue
        # per token: 2 strong evidence, 1 weak, 0 none, -1 particle
        marks = []
        for t in run:
            f = folded[t]
            if is_particle(f):
                marks.append(-1)
            elif patient is not None and patient.kind(f) is not None:
                marks.append(2)
            elif f in (known := _gazetteer_name_words(view, matches) if known is None else known):
                # a name of the gazetteer that is also a word (bras, martin) is weaker
                marks.append(1 if is_common_word(words[t]) else 2)
            elif f in (places := _commune_words(view, matches) if places is None else places):
                marks.append(0)  # "le docteur kerbrat de brest": the town ends the name
            elif len(f) > 2 and not words[t].endswith(_VERB_ENDINGS) and not is_common_word(words[t]):
                marks.append(1)
            else:
                marks.append(0)
        cores = [p for p, m in enumerate(marks) if m >= 0]
        if not cores:
            continue
        # the run: leading particles, an optional first word without evidence, then words with evidence
        first = cores[0]
        if folded[run[first]] in _VERBS_AFTER_TITLE:
            continue
        if marks[first] == 0:
            if len(cores) < 2 or marks[cores[1]] <= 0 or cores[1] - first > 3:
                continue
        last = first
        for p in cores[1:]:
            if marks[p] <= 0:
                break
            last = p
        n_cores = sum(1 for p in cores if p <= last)
        strong = any(marks[p] == 2 for p in cores if p <= last)
        if marks[first] == 0 and not doctor and not strong:
            continue
        if not doctor and n_cores < 2 and not strong:
            one_name = folded[k] in _LOWER_ONE_NAME_ANCHORS and marks[first] == 1
            if not one_name or _french_words_only(view, (run[first], run[first] + 1)):
                continue
        start_token = run[0]  # the particles before the first word lead the name (le gall, de la tour)
        label, source = ("DOCTOR", "context:lower_case_title") if doctor else ("PATIENT", "context:lower_case_civility")
        found.append(Candidate(view.starts[start_token], view.ends[run[last]], label, source, 0.7))
    return found


def _lower_run(view: NoteView, i: int, n: int) -> list[int]:
    """Tokens from ``i`` on that could be a lower-case name: joined letters-only words, not a stop word."""
    run: list[int] = []
    k = i
    while k < n and len(run) < _NAME_WORD_MAX and view.shapes[k] == LOWER:
        f = view.folded[k]
        if (f in NOT_NAME and not is_particle(f)) or not f.replace("-", "").replace("'", "").isalpha():
            break
        run.append(k)
        if not view.joins[k]:
            break
        k += 1
    while run and is_particle(view.folded[run[-1]]):
        run.pop()
    return run


def _gazetteer_name_words(view: NoteView, matches) -> frozenset[str]:
    """The folded words of the note inside a match of the name gazetteer (first, last or full names)."""
    return frozenset(word for found in _name_matches(view, matches).values() for m in found for word in m.key.split())


def _commune_words(view: NoteView, matches) -> frozenset[str]:
    """The folded words of the note inside a match of a commune that is no common word (places gazetteer); once
    per note (both lower-case rules, the titles' and the civilities', may ask)."""
    words = view.cache.get("commune_words")
    if words is None:
        words = view.cache["commune_words"] = frozenset(
            word
            for m in matches
            if any(c.table == "places" and c.kind == "commune" and not c.ambiguous for c in m.categories)
            for word in m.key.split()
        )
    return words


def _name_matches(view: NoteView, matches) -> dict[str, list[Match]]:
    """The matches of the name gazetteer (whole names, not compound parts), by kind; once per note.

    The matcher gives all keys read the same way one shared categories tuple: each tuple's kinds are
    found once (remembered by identity, as in :func:`directory_names`), not at every match.
    """
    found = view.cache.get("name_matches")
    if found is None:
        found = view.cache["name_matches"] = {"firstname": [], "lastname": [], "fullname": []}
        kinds_of: dict[int, tuple[str, ...]] = {}
        for match in matches:
            categories = match.categories
            kinds = kinds_of.get(id(categories))
            if kinds is None:
                kinds = kinds_of[id(categories)] = tuple(
                    c.kind for c in categories if c.table == "names" and not c.part and c.kind in found
                )
            for kind in kinds:
                found[kind].append(match)
    return found
