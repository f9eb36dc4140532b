"""The twelve document types, each in two phrasing families.

A document function writes one note into ``ctx.doc``. Structure follows the real document: a
hospitalisation report has a letterhead, an identity block, titled sections and copies; a prescription
has the prescriber's header, the patient's name and ``Rennes, le 03/02/2021``; a biology report is a
table of results with the sampling times. Wording that surrounds identifiers comes from per-family
banks (``_pick(ctx, family0_bank, family1_bank)``), so the held-out family really is new phrasing.
"""

from __future__ import annotations

from collections.abc import Callable

from deid_ds.synth import clinical
from deid_ds.synth.blocks import (
    bullet_list,
    close_page,
    copies,
    footer,
    identity_block,
    letterhead,
    open_page,
    para,
    recipient_block,
    section,
    signature,
    title,
)
from deid_ds.synth.context import NoteContext
from deid_ds.synth.formats import Ent


def _end(ctx: NoteContext) -> None:
    """Most exported documents end with a running footer naming the patient again."""
    if ctx.rng.random() < 0.6:
        footer(ctx)
    close_page(ctx)


def _pick(ctx: NoteContext, bank0: tuple[str, ...], bank1: tuple[str, ...]) -> str:
    return ctx.rng.choice((bank0, bank1)[ctx.family])


def _clin(ctx: NoteContext, bank: tuple[str, ...], k: int = 1) -> list[str]:
    """``k`` sentences of clinical prose (no identifier), numbers filled in."""
    rng = ctx.rng
    female = ctx.patient.sex == "F"
    return [
        clinical.fill_numbers(rng, s, age=str(ctx.age), e="e" if female else "")
        for s in rng.sample(bank, min(k, len(bank)))
    ]


def _motif(ctx: NoteContext) -> str:
    kind = ctx.department.kind if ctx.department.kind in clinical.MOTIFS else "medical"
    return ctx.rng.choice(clinical.MOTIFS[kind])


def _antecedents(ctx: NoteContext) -> list[str]:
    rng = ctx.rng
    medical = ", ".join(rng.sample(clinical.ANTECEDENTS, rng.randrange(2, 5)))
    surgery = rng.choice(clinical.SURGERIES)
    if ctx.family == 0:
        return [
            f"- {medical}",
            rng.choice(
                (
                    f"- {surgery} en {{year:surgery}}",
                    f"- {surgery} le {{date:surgery}}",
                    f"- {surgery} à l'été {{year:surgery}}",
                )
            ),
        ]
    return [
        f"Médicaux : {medical}.",
        rng.choice((f"Chirurgicaux : {surgery} ({{year:surgery}}).", f"Chirurgicaux : {surgery}, {{my:surgery}}.")),
    ]


def _social(ctx: NoteContext) -> list[str]:
    lines = [
        _pick(
            ctx,
            (
                "Vit à domicile avec {rel}.",
                "Vit seul{e}, {rel} passe tous les jours.",
                "Retraité{e}, vit à {city:home} avec {rel}.",
            ),
            (
                "Entourage : {rel}, très présent{e}.",
                "Domicile avec {rel} ; aides à domicile deux fois par jour.",
                "Domicilié{e} à {city:home}, en maison avec étage.",
            ),
        )
    ]
    if ctx.rng.random() < 0.6:
        lines.append(_pick(ctx, ("Personne de confiance : {rel:tel}.",), ("Personne à prévenir : {rel:tel}",)))
    lines += _clin(ctx, clinical.HOMONYM_SENTENCES)
    return lines


# -- 1. hospitalisation report ----------------------------------------------------------------------------


def hospitalisation_report(ctx: NoteContext) -> None:
    open_page(ctx, "Compte rendu d'hospitalisation")
    letterhead(ctx)
    title(ctx, ("Compte rendu d'hospitalisation", "Synthèse de séjour")[ctx.family])
    identity_block(ctx)
    para(
        ctx,
        _pick(
            ctx,
            (
                "Hospitalisation du {date:admission} au {date:discharge} dans le service {dsvc}.",
                "{Civ} {pat:bare} a été hospitalisé{e} du {date:admission} au {date:discharge}.",
            ),
            (
                "Séjour en {svc} : entrée le {date:admission}, sortie le {date:discharge}.",
                "Entrée : {date:admission} — Sortie : {date:discharge} (unité {dsvc})",
            ),
        ),
    )
    section(ctx, ("Motif d'hospitalisation", "Motif"), _motif(ctx) + ".")
    section(ctx, ("Antécédents", "Antécédents médico-chirurgicaux"), *_antecedents(ctx))
    section(ctx, ("Mode de vie", "Contexte social"), *_social(ctx))
    section(
        ctx, ("Traitement à l'entrée", "Traitement habituel"), *clinical.drug_lines(ctx.rng, ctx.rng.randrange(2, 6))
    )
    section(
        ctx,
        ("Histoire de la maladie", "Anamnèse"),
        *_clin(ctx, clinical.TIME_SENTENCES, 2),
        *_clin(ctx, clinical.NEGATIONS),
    )
    section(ctx, ("Examen clinique", "Examen à l'entrée"), *_clin(ctx, clinical.EXAM, 3))
    evolution = [
        _pick(
            ctx,
            (
                "Avis du {doc:colleague} le {dm:exam} : poursuite du traitement.",
                "Prise en charge par {doc:staff} pour la rééducation.",
                "Patient{e} revu{e} par {doc:intern} à J{n}.",
            ),
            (
                "Le {dm:exam}, {docn:colleague} est sollicité pour avis.",
                "Rééducation quotidienne avec {docn:staff}.",
                "Examen réalisé par {doc:intern}, validé par le senior.",
            ),
        ),
        _pick(
            ctx,
            (
                "{Civ} {pat:last} a bien toléré le traitement.",
                "L'état de {civ} {pat:last} s'est progressivement amélioré.",
            ),
            (
                "Au fil du séjour, {pat:nociv} a retrouvé son autonomie.",
                "Bonne tolérance du traitement chez {pat:init}.",
            ),
        ),
        *_clin(ctx, clinical.NEGATIONS, 2),
    ]
    section(ctx, ("Évolution", "Évolution dans le service"), *evolution)
    section(ctx, ("Conclusion", "Synthèse"), *_clin(ctx, clinical.CONCLUSIONS))
    section(
        ctx, ("Traitement de sortie", "Ordonnance de sortie"), *clinical.drug_lines(ctx.rng, ctx.rng.randrange(2, 5))
    )
    section(
        ctx,
        ("Suivi", "Rendez-vous"),
        _pick(
            ctx,
            (
                "Consultation de contrôle le {date:next} à {rdv} avec le {doc:colleague}.",
                "Revoir le médecin traitant, {doc:gp}, dans {n} jours.",
            ),
            ("Prochain rendez-vous : {date:next}, {rdv}, {docn:colleague}.", "Suivi par {docn:gp} ({tel:gp})."),
        ),
    )
    signature(ctx)
    copies(ctx)
    _end(ctx)


# -- 2. discharge letter ----------------------------------------------------------------------------------


def discharge_letter(ctx: NoteContext) -> None:
    open_page(ctx, "Lettre de liaison")
    letterhead(ctx)
    recipient_block(ctx)
    para(ctx, _pick(ctx, ("{city:hosp}, le {date:visit}",), ("Le {date:visit}, à {city:hosp}",)))
    if ctx.family == 1:
        para(ctx, "Objet : lettre de liaison — {pat:nociv}, né{e} le {date:birth}")
    para(ctx, _pick(ctx, ("Cher confrère,", "Chère consœur,"), ("Chère consœur, cher confrère,", "Mon cher confrère,")))
    para(
        ctx,
        _pick(
            ctx,
            (
                (
                    "Votre patient{e}, {civ} {pat:bare}, âgé{e} de {age} ans, a été hospitalisé{e} dans notre service "
                    "du {date:admission} au {date:discharge} pour {motif}."
                ),
                (
                    "J'ai pris en charge {pat}, né{e} le {date:birth}, du {date:admission} au {date:discharge}, pour "
                    "{motif}."
                ),
            ),
            (
                (
                    "Je vous informe de la sortie, le {date:discharge}, de {pat}, que nous avions accueilli{e} le "
                    "{date:admission} ({motif})."
                ),
                (
                    "{pat} regagne son domicile ce {date:discharge} après un séjour débuté le {date:admission}, "
                    "motivé par : {motif}."
                ),
            ),
        ).replace("{motif}", _motif(ctx)),
    )
    para(
        ctx, *_clin(ctx, clinical.TIME_SENTENCES, 1), *_clin(ctx, clinical.EXAM, 2), *_clin(ctx, clinical.NEGATIONS, 2)
    )
    para(
        ctx,
        _pick(
            ctx,
            (
                "À la sortie, {il} rentre à domicile avec {rel}.",
                "Un passage infirmier à domicile est organisé par {doc:nurse}.",
            ),
            (
                "Retour à domicile organisé, {rel} sera présent{e}.",
                "Coordination du retour : {doc:nurse}, joignable au {tel:service}.",
            ),
        ),
    )
    bullet_list(ctx, clinical.drug_lines(ctx.rng, ctx.rng.randrange(2, 5)))
    para(
        ctx,
        _pick(
            ctx,
            ("Je reste à votre disposition pour tout renseignement complémentaire.",),
            ("N'hésitez pas à me contacter par courriel ({mail:author}) pour toute question.",),
        ),
    )
    signature(ctx)
    copies(ctx)
    _end(ctx)


# -- 3. operative report ------------------------------------------------------------------------------------


def operative_report(ctx: NoteContext) -> None:
    rng = ctx.rng
    open_page(ctx, "Compte rendu opératoire")
    letterhead(ctx)
    title(ctx, ("Compte rendu opératoire", "CRO — bloc opératoire")[ctx.family])
    identity_block(ctx, phone=False)
    if ctx.family == 0:
        para(
            ctx,
            "Date de l'intervention : {date:visit}",
            "Opérateur : {doc}",
            "Aide opératoire : {doc:intern}",
            "IBODE : {docn:nurse}",
            "Anesthésie générale — heure d'incision : {time}",
        )
    else:
        ctx.doc.markup('<table border="1"><tr><th>Équipe</th><th>Nom</th></tr>\n<tr><td>Chirurgien</td><td>')
        ctx.say("{docn}")
        ctx.doc.markup("</td></tr>\n<tr><td>Assistant</td><td>")
        ctx.say("{docn:intern}")
        ctx.doc.markup("</td></tr>\n<tr><td>Infirmier(e) de bloc</td><td>")
        ctx.say("{docn:nurse}")
        ctx.doc.markup("</td></tr></table>\n")
        para(ctx, "Intervention réalisée le {date:visit}, début {time}, fin {time}.")
    section(ctx, ("Indication", "Indication opératoire"), _motif(ctx) + ".", *_clin(ctx, clinical.TIME_SENTENCES))
    gesture = rng.choice(clinical.SURGERIES)
    section(ctx, ("Intervention", "Geste réalisé"), gesture + ".")
    section(
        ctx,
        ("Description", "Déroulement"),
        "Installation en décubitus dorsal. Antibioprophylaxie par céfazoline 2 g.",
        rng.choice(
            (
                "Incision médiane sus- et sous-ombilicale.",
                "Abord par voie antérolatérale.",
                "Open coelioscopie, trois trocarts.",
            )
        ),
        rng.choice(
            (
                "Hémostase soigneuse. Pas de drainage.",
                "Mise en place d'un drain de Redon.",
                "Fermeture plan par plan, surjet intradermique.",
            )
        ),
        *_clin(ctx, clinical.NEGATIONS),
    )
    section(
        ctx,
        ("Suites", "Consignes post-opératoires"),
        _pick(
            ctx,
            (
                "Lever à J1. Ablation des fils à J{n} par l'IDE à domicile.",
                "Consultation post-opératoire le {date:next}.",
            ),
            (
                "Soins de pansement par l'infirmier libéral, ablation des agrafes à J{n}.",
                "Revu en consultation de chirurgie le {dm:next}.",
            ),
        ),
    )
    signature(ctx)
    _end(ctx)


# -- 4. consultation ----------------------------------------------------------------------------------------


def consultation(ctx: NoteContext) -> None:
    open_page(ctx, "Consultation")
    letterhead(ctx)
    if ctx.family == 0:
        title(ctx, "Compte rendu de consultation")
        para(ctx, "Consultation du {date:visit}", "Patient{e} : {pat:full}, né{e} le {date:birth}")
        para(
            ctx,
            "{Civ} {pat:bare}, {age} ans, est revu{e} ce jour pour le suivi : {motif}.".replace("{motif}", _motif(ctx)),
            "Dernière consultation le {date:prev}.",
        )
    else:
        recipient_block(ctx)
        para(ctx, "{city:hosp}, {date:visit}")
        para(ctx, "Mon cher confrère,")
        para(
            ctx,
            (
                "J'ai revu en consultation votre patient{e} {pat}, {age} ans, que je suis pour {motif}. "
                "Je l'avais vu{e} pour la dernière fois le {dm:prev}."
            ).replace("{motif}", _motif(ctx)),
        )
    para(
        ctx,
        *_clin(ctx, clinical.TIME_SENTENCES, 1),
        *_clin(ctx, clinical.NEGATIONS, 2),
        *_clin(ctx, clinical.HOMONYM_SENTENCES),
    )
    para(ctx, *_clin(ctx, clinical.EXAM, 2))
    section(
        ctx,
        ("Conduite à tenir", "Au total"),
        *_clin(ctx, clinical.CONCLUSIONS),
        _pick(
            ctx,
            ("Prochain rendez-vous le {date:next}.", "Je reverrai {pat:nociv} en {my:next}."),
            ("À revoir en consultation le {date:next}.", "Nouvelle évaluation prévue en {my:next}."),
        ),
    )
    signature(ctx)
    if ctx.rng.random() < 0.6:
        copies(ctx)
    _end(ctx)


# -- 5. emergency -------------------------------------------------------------------------------------------


def emergency(ctx: NoteContext) -> None:
    open_page(ctx, "Urgences")
    letterhead(ctx)
    title(ctx, ("Dossier de passage aux urgences", "Observation médicale — SAU")[ctx.family])
    identity_block(ctx)
    if ctx.family == 0:
        para(
            ctx,
            "Arrivée le {date:visit} à {time}, par les pompiers.",
            "Accompagné{e} de {rel}.",
            "IOA : {docn:nurse} — tri 3.",
            "Médecin urgentiste : {doc}",
        )
    else:
        para(
            ctx,
            "Admis{e} au SAU le {date:visit} ({time}), amené{e} par {rel}.",
            "Infirmier d'accueil : {docn:nurse}.",
            "Senior : {docn}, interne : {docn:intern}.",
        )
    section(
        ctx,
        ("Motif de recours", "Plainte principale"),
        _motif(ctx) + ".",
        *_clin(ctx, clinical.TIME_SENTENCES, 2),
        _pick(
            ctx,
            (
                "Chute à vélo {street}, sans perte de connaissance.",
                "Trouvé{e} au sol devant son domicile, {street}, par {rel}.",
            ),
            (
                "Renversé{e} par une voiture {street} selon les pompiers.",
                "Malaise sur la voie publique ({street}), témoin : {rel}.",
            ),
        ),
    )
    section(ctx, ("Antécédents", "ATCD"), *_antecedents(ctx))
    section(ctx, ("Examen", "Clinique"), *_clin(ctx, clinical.EXAM, 3), *_clin(ctx, clinical.NEGATIONS, 2))
    section(
        ctx,
        ("Devenir", "Orientation"),
        _pick(
            ctx,
            ("Retour à domicile à {time}. Consignes de reconsultation données.", "Hospitalisation en {svc}."),
            (
                "Sortie vers le domicile à {time}, revoir {docn:gp} sous {n} jours.",
                "Transfert en unité d'hospitalisation de courte durée.",
            ),
        ),
        *_clin(ctx, clinical.HOMONYM_SENTENCES),
    )
    signature(ctx)
    _end(ctx)


# -- 6. imaging ---------------------------------------------------------------------------------------------

_EXAMS = (
    "Scanner thoraco-abdomino-pelvien injecté",
    "IRM cérébrale",
    "Échographie abdominale",
    "Radiographie du thorax de face",
    "Angioscanner thoracique",
    "IRM du genou droit",
    "Doppler veineux des membres inférieurs",
)
_FINDINGS = (
    "Pas d'épanchement pleural ni péricardique.",
    "Nodule pulmonaire de 6 mm du lobe supérieur droit.",
    "Hypersignaux de la substance blanche, Fazekas 2.",
    "Vésicule lithiasique à paroi fine.",
    "Pas de thrombose veineuse profonde.",
    "Kyste rénal gauche Bosniak I.",
    "Lésion méniscale interne de grade 3.",
    "Pas d'adénopathie médiastinale.",
    "Foie de taille normale, de contours réguliers.",
)


def imaging(ctx: NoteContext) -> None:
    rng = ctx.rng
    open_page(ctx, "Compte rendu d'imagerie")
    letterhead(ctx)
    exam = rng.choice(_EXAMS)
    if ctx.family == 0:
        title(ctx, exam)
        para(ctx, "Patient{e} : {pat:nociv} — DDN : {date:birth}", "Examen du {date:visit}", "Demandeur : {doc:gp}")
        section(ctx, ("Indication", ""), _motif(ctx) + ".")
        section(ctx, ("Technique", ""), "Acquisition hélicoïdale, injection de 80 mL de produit de contraste iodé.")
        section(ctx, ("Résultats", ""), *rng.sample(_FINDINGS, 3), "Comparaison avec l'examen du {date:prev}.")
        section(ctx, ("Conclusion", ""), rng.choice(_FINDINGS))
        para(ctx, "Radiologue : {doc}")
    else:
        title(ctx, "Compte rendu — " + exam)
        identity_block(ctx, phone=False)
        para(ctx, "Réalisé le {date:visit} à {time} à la demande de {doc:gp} ({tel:gp}).")
        section(ctx, ("", "Renseignements cliniques"), _motif(ctx) + ".")
        section(
            ctx,
            ("", "Analyse"),
            *rng.sample(_FINDINGS, 3),
            "Par rapport au précédent examen ({date:prev}) : stabilité.",
        )
        section(ctx, ("", "En conclusion"), rng.choice(_FINDINGS))
        signature(ctx)
    _end(ctx)


# -- 7. prescription ----------------------------------------------------------------------------------------


def prescription(ctx: NoteContext) -> None:
    rng = ctx.rng
    open_page(ctx, "Ordonnance")
    letterhead(ctx)
    if ctx.family == 0:
        title(ctx, "Ordonnance")
        para(ctx, "{city:hosp}, le {date:visit}")
        para(
            ctx, "{pat}" + (" — {age} ans" if rng.random() < 0.5 else "") + (" — {n}0 kg" if rng.random() < 0.3 else "")
        )
        bullet_list(
            ctx,
            [
                line + ", QSP 3 mois" if rng.random() < 0.4 else line
                for line in clinical.drug_lines(rng, rng.randrange(1, 5))
            ],
        )
        para(ctx, "{doc}")
    else:
        title(ctx, "Ordonnance bizone")
        para(ctx, "Nom et prénom du patient : {pat:bare}", "Date de naissance : {date:birth}")
        drugs = clinical.drug_lines(rng, rng.randrange(2, 6))
        cut = rng.randrange(1, len(drugs))
        para(ctx, "Prescriptions relatives au traitement de l'affection de longue durée :")
        bullet_list(ctx, drugs[:cut])
        para(ctx, "Prescriptions sans rapport avec l'affection de longue durée :")
        bullet_list(ctx, drugs[cut:])
        para(ctx, "Fait à {city:hosp} le {date:visit}, par {docn}")
    _end(ctx)


# -- 8. pathology -------------------------------------------------------------------------------------------

_PATHO = (
    "Adénocarcinome lieberkühnien moyennement différencié, pT3 N0.",
    "Adénocarcinome prostatique, score de Gleason 7 (3+4).",
    "Mélanome à extension superficielle, indice de Breslow 0,8 mm, niveau IV de Clark.",
    "Lésion de Barrett sans dysplasie.",
    "Carcinome canalaire infiltrant, grade SBR II.",
    "Polype adénomateux tubuleux en dysplasie de bas grade.",
    "Lymphome de Hodgkin classique, sous-type scléronodulaire.",
    "Absence de lésion tumorale maligne.",
)


def pathology(ctx: NoteContext) -> None:
    rng = ctx.rng
    open_page(ctx, "Anatomie pathologique")
    letterhead(ctx)
    number = f"{rng.choice('HBC')}{ctx.when.year % 100:02d}-{rng.randrange(1000, 99999):05d}"
    if ctx.family == 0:
        title(ctx, "Compte rendu anatomo-pathologique")
        para(
            ctx,
            f"N° d'examen : {number}",
            "Patient{e} : {pat:nociv}, né{e} le {date:birth}",
            "Prélèvement reçu le {date:visit}",
            "Médecin préleveur : {doc:colleague}",
        )
    else:
        title(ctx, "Examen histopathologique")
        identity_block(ctx, phone=False)
        para(
            ctx,
            (
                f"Référence {number} — prélevé le {{date:exam}}, enregistré le {{date:visit}} — préleveur "
                f"{{docn:colleague}}"
            ),
        )
    section(ctx, ("Renseignements cliniques", "Contexte"), _motif(ctx) + ".")
    section(
        ctx,
        ("Macroscopie", "Description macroscopique"),
        f"Fragment de {rng.randrange(2, 60)} x {rng.randrange(2, 40)} mm, inclus en totalité.",
    )
    section(ctx, ("Microscopie", "Étude histologique"), rng.choice(_PATHO), *_clin(ctx, clinical.NEGATIONS))
    section(ctx, ("Conclusion", "Diagnostic"), rng.choice(_PATHO))
    para(
        ctx,
        _pick(
            ctx,
            ("Pathologiste : {doc} — validé le {date:visit}",),
            ("Compte rendu validé électroniquement par {docn}.",),
        ),
    )
    _end(ctx)


# -- 9. referral letter (from the GP) -----------------------------------------------------------------------


def referral_letter(ctx: NoteContext) -> None:
    rng, doc, gp = ctx.rng, ctx.doc, ctx.patient.gp
    open_page(ctx, "Courrier")
    if ctx.family == 0:
        doc.markup("<p><b>")
        ctx.emit(["Docteur ", Ent("DOCTOR", f"{gp.first} {gp.last.upper()}")])
        doc.markup("</b><br>\n")
        doc.text("Médecine générale")
        doc.markup("<br>\n")
        ctx.emit(ctx.address_fragments(gp.practice, inline=False))
        doc.markup("<br>\n")
        ctx.emit(["Tél. ", ctx.phone_ent(gp.phone)])
        doc.markup("<br>\n")
        ctx.emit([Ent("EMAIL", gp.email)])
        doc.markup("</p>\n")
        para(ctx, "{city:gp}, le {date:visit}")
    else:
        doc.markup('<div class="entete">')
        ctx.emit(["Cabinet médical — ", Ent("DOCTOR", f"{gp.first} {gp.last}"), ", médecin généraliste — "])
        ctx.emit(ctx.address_fragments(gp.practice, inline=True))
        doc.markup("<br>\n")
        ctx.emit(["☎ ", ctx.phone_ent(gp.phone), " — ", Ent("EMAIL", gp.email)])
        doc.markup("</div>\n")
        para(ctx, "Le {date:visit}")
    para(
        ctx,
        _pick(
            ctx,
            ("À l'attention du {doc:head}, service {dsvc}, {hosp}",),
            ("Destinataire : {docn:head} ({svc}) — {hosp}",),
        ),
    )
    para(ctx, _pick(ctx, ("Cher confrère,",), ("Chère consœur, cher confrère,",)))
    para(
        ctx,
        _pick(
            ctx,
            (
                "Je vous adresse {pat}, né{e} le {date:birth}, pour avis concernant : {motif}.",
                "Merci de bien vouloir recevoir {pat}, {age} ans, qui présente : {motif}.",
            ),
            (
                "Je me permets de vous confier {pat} ({date:birth}) pour {motif}.",
                "Pourriez-vous voir en consultation {pat:bare}, {age} ans ? Motif : {motif}.",
            ),
        ).replace("{motif}", _motif(ctx)),
        *_clin(ctx, clinical.TIME_SENTENCES, 1),
        *_clin(ctx, clinical.NEGATIONS, 1),
    )
    para(
        ctx,
        "Antécédents : " + ", ".join(rng.sample(clinical.ANTECEDENTS, 3)) + ".",
        "Traitement : " + " ; ".join(clinical.drug_lines(rng, 2)) + ".",
    )
    para(
        ctx,
        _pick(
            ctx,
            ("{Il} est joignable au {tel:patient}.", "Vous pouvez joindre {rel:tel}."),
            ("Coordonnées du patient : {tel:mobile}.", "Contact : {rel:tel}."),
        ),
    )
    para(ctx, _pick(ctx, ("Bien confraternellement.",), ("Merci de votre aide, bien à vous.",)))
    ctx.emit(["", *ctx.pro_name(gp)])
    _end(ctx)


# -- 10. letter to the patient ------------------------------------------------------------------------------


def patient_letter(ctx: NoteContext) -> None:
    open_page(ctx, "Courrier patient")
    letterhead(ctx)
    recipient_block(ctx, to_patient=True)
    para(ctx, _pick(ctx, ("{city:hosp}, le {date:visit}",), ("Fait le {date:visit}",)))
    para(ctx, "{Civ},")
    para(
        ctx,
        _pick(
            ctx,
            (
                (
                    "Suite à votre consultation du {date:prev}, je vous informe que les résultats de vos examens sont "
                    "normaux."
                ),
                "Comme convenu lors de notre entretien du {date:prev}, vous trouverez ci-joint votre ordonnance.",
            ),
            (
                (
                    "Nous avons bien reçu les résultats de l'examen réalisé le {date:prev} ; ils ne montrent pas "
                    "d'anomalie."
                ),
                "Je reviens vers vous à propos de votre bilan de {my:prev}.",
            ),
        ),
        *_clin(ctx, clinical.CONCLUSIONS),
    )
    para(
        ctx,
        _pick(
            ctx,
            ("Un rendez-vous vous est proposé le {date:next} à {rdv}.",),
            ("Nous vous attendons le {date:next} ({rdv}) pour en discuter.",),
        ),
        _pick(
            ctx,
            ("Pour toute question, le secrétariat est joignable au {tel:service}.",),
            ("Secrétariat : {tel:service} ou {mail:service}.",),
        ),
    )
    para(
        ctx,
        _pick(
            ctx,
            ("Je vous prie d'agréer, {Civ}, l'expression de mes salutations distinguées.",),
            ("Bien cordialement,",),
        ),
    )
    signature(ctx)
    _end(ctx)


# -- 11. administrative convocation -------------------------------------------------------------------------


def convocation(ctx: NoteContext) -> None:
    open_page(ctx, "Convocation")
    letterhead(ctx)
    recipient_block(ctx, to_patient=True)
    title(ctx, ("Convocation", "Avis de rendez-vous")[ctx.family])
    if ctx.family == 0:
        para(
            ctx,
            "{Civ},",
            (
                "Vous êtes attendu{e} le {date:next} à {rdv} dans le service {dsvc} ({site}) pour une hospitalisation "
                "programmée."
            ),
            (
                "Merci de vous présenter au bureau des entrées muni{e} de votre carte Vitale, de votre pièce "
                "d'identité et de vos derniers examens."
            ),
            "Vous devez être à jeun depuis minuit. Ne pas prendre votre traitement le matin, sauf avis contraire.",
            "En cas d'empêchement, merci de prévenir le secrétariat au {tel:service} ou par courriel : {mail:service}.",
        )
        para(ctx, "Rendez-vous pris le {date:visit} par {doc:secretary}.")
    else:
        ctx.doc.markup('<table border="1">\n<tr><td>Date</td><td>')
        ctx.say("{date:next}")
        ctx.doc.markup("</td></tr>\n<tr><td>Heure</td><td>")
        ctx.say("{rdv}")
        ctx.doc.markup("</td></tr>\n<tr><td>Lieu</td><td>")
        ctx.say("{svc} — {site}")
        ctx.doc.markup("</td></tr>\n</table>\n")
        para(
            ctx,
            "Documents à apporter : carte Vitale, attestation de mutuelle, ordonnances en cours.",
            "Annulation : {tel:service} (du lundi au vendredi de 9h à 17h).",
            "Convocation éditée le {date:visit}.",
        )
    _end(ctx)


# -- 12. biology --------------------------------------------------------------------------------------------

_ANALYTES = (
    ("Hémoglobine", "g/dL", (80, 170), 10, "12,0 - 16,0"),
    ("Leucocytes", "G/L", (30, 180), 10, "4,0 - 10,0"),
    ("Plaquettes", "G/L", (90, 450), 1, "150 - 400"),
    ("Sodium", "mmol/L", (128, 148), 1, "136 - 145"),
    ("Potassium", "mmol/L", (30, 55), 10, "3,5 - 5,0"),
    ("Créatinine", "µmol/L", (45, 300), 1, "45 - 90"),
    ("CRP", "mg/L", (1, 250), 1, "< 5"),
    ("TSH", "mUI/L", (2, 80), 10, "0,40 - 4,00"),
    ("HbA1c", "%", (50, 110), 10, "4,0 - 6,0"),
)


def biology(ctx: NoteContext) -> None:
    rng, doc = ctx.rng, ctx.doc
    open_page(ctx, "Biologie")
    letterhead(ctx)
    title(ctx, ("Compte rendu d'analyses de biologie médicale", "Résultats de laboratoire")[ctx.family])
    if ctx.family == 0:
        para(
            ctx,
            "Patient{e} : {pat:nociv}" + (" née {pat:last}" if ctx.patient.married_name and rng.random() < 0.3 else ""),
            "Né{e} le {date:birth} — Sexe : " + ctx.patient.sex,
            "Prescripteur : {doc:gp}",
            "Prélevé le {date:visit} à {time} — Reçu le {date:visit} à {time}",
        )
    else:
        identity_block(ctx, phone=False)
        para(ctx, "Prélèvement : {date:visit}, {time} ; enregistrement : {time}.", "Médecin demandeur : {docn:gp}.")
    doc.markup(
        '<table border="1" cellspacing="0">\n'
        "<tr><th>Analyse</th><th>Résultat</th><th>Unité</th><th>Valeurs de référence</th><th>Antériorité</th></tr>\n"
    )
    for name, unit, (low, high), div, ref in rng.sample(_ANALYTES, rng.randrange(4, 8)):
        value = rng.randrange(low, high)
        shown = f"{value / div:.1f}".replace(".", ",") if div > 1 else str(value)
        doc.markup("<tr><td>")
        doc.text(name)
        doc.markup("</td><td>")
        doc.text(shown)
        doc.markup("</td><td>")
        doc.text(unit)
        doc.markup("</td><td>")
        doc.text(ref)
        doc.markup("</td><td>")
        if rng.random() < 0.3:
            ctx.say(_pick(ctx, ("{date:prev}",), ("(le {date:prev})",)))
        doc.markup("</td></tr>\n")
    doc.markup("</table>\n")
    para(ctx, _pick(ctx, ("Biologiste responsable : {doc}",), ("Validation biologique : {docn}, le {date:visit}",)))
    _end(ctx)


#: doc_type -> (writer, department kind it belongs to, relative frequency)
DOCUMENT_TYPES: dict[str, tuple[Callable[[NoteContext], None], str, int]] = {
    "hospitalisation_report": (hospitalisation_report, "clinical", 14),
    "discharge_letter": (discharge_letter, "clinical", 10),
    "operative_report": (operative_report, "surgical", 7),
    "consultation": (consultation, "clinical", 14),
    "emergency": (emergency, "emergency", 9),
    "imaging": (imaging, "imaging", 9),
    "prescription": (prescription, "clinical", 8),
    "pathology": (pathology, "pathology", 5),
    "referral_letter": (referral_letter, "clinical", 6),
    "patient_letter": (patient_letter, "clinical", 5),
    "convocation": (convocation, "clinical", 6),
    "biology": (biology, "biology", 7),
}
